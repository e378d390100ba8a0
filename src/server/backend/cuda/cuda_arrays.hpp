// The real GPU's CUDA arrays, 3-D copies, texture and surface objects: the
// CUDA runtime's own calls, handles passed through as they are.
#pragma once
#include <cuda_runtime_api.h>

#include "server/backend/array_api.hpp"

namespace rgpu::server {

// Bytes per element of a CUDA array.
int32_t array_element_size(uint64_t array, size_t* element);
// The runtime's parameters for a copy between two sides (a pointer side's
// position in bytes, as CopySide has it).
int32_t copy_3d_parms(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind kind,
                      cudaMemcpy3DParms* p);

class CudaArrays final : public ArrayApi {
 public:
  int32_t array_create(const ArraySpec& spec, uint64_t* array) override;
  int32_t array_destroy(uint64_t array) override;
  int32_t mipmapped_array_create(const ArraySpec& spec, unsigned levels, uint64_t* mipmap) override;
  int32_t mipmapped_array_destroy(uint64_t mipmap) override;
  int32_t mipmapped_array_level(uint64_t mipmap, unsigned level, uint64_t* array) override;
  int32_t memcpy3d_async(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind kind,
                         uint64_t stream) override;
  int32_t texture_create(uint64_t* texture, const cudaResourceDesc& resource, const cudaTextureDesc& texture_desc,
                         const cudaResourceViewDesc* view) override;
  int32_t texture_destroy(uint64_t texture) override;
  int32_t surface_create(uint64_t* surface, const cudaResourceDesc& resource) override;
  int32_t surface_destroy(uint64_t surface) override;
  // Texture references (cuda_texture_references.cpp).
  int32_t texref_create(uint64_t* ref) override;
  int32_t texref_destroy(uint64_t ref) override;
  int32_t module_get_reference(uint64_t module, const std::string& name, bool surface, uint64_t* ref) override;
  int32_t reference_set(uint64_t ref, proto::RefAttr attr, const proto::RefValue& value,
                        proto::RefValue* out) override;
  int32_t reference_get(uint64_t ref, proto::RefAttr attr, proto::RefValue* value) override;
};

}  // namespace rgpu::server
