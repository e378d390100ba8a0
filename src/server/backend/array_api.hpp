// What a backend does for CUDA arrays, mipmapped arrays, 3-D copies, texture
// and surface objects and the legacy references. The worker has checked every handle, extent
// and descriptor first: array handles are values this interface returned,
// pointers lie inside the session's memory, formats are ones
// proto::channel_element_size accepts.
#pragma once
#include <driver_types.h>
#include <texture_types.h>

#include <cstdint>
#include <string>

#include "protocol/texture_reference_wire.hpp"

namespace rgpu::server {

struct ArraySpec {
  cudaChannelFormatDesc format;
  cudaExtent extent;  // in elements; height and depth 0 for 1-D and 2-D arrays, as CUDA has it
  unsigned flags;
};

// One side of a 3-D copy, as cudaMemcpy3DParms has it: an array (x in
// elements) or pitched memory (x in bytes; a device address or a worker-local
// host buffer).
struct CopySide {
  uint64_t array = 0;  // 0: `ptr` below
  void* ptr = nullptr;
  size_t pitch = 0, rows = 0;  // bytes per row, rows per slice
  cudaPos pos{};  // an array's x in elements, a pointer's in bytes
};

class ArrayApi {
 public:
  virtual ~ArrayApi() = default;
  virtual int32_t array_create(const ArraySpec& spec, uint64_t* array) = 0;
  virtual int32_t array_destroy(uint64_t array) = 0;
  virtual int32_t mipmapped_array_create(const ArraySpec& spec, unsigned levels, uint64_t* mipmap) = 0;
  virtual int32_t mipmapped_array_destroy(uint64_t mipmap) = 0;
  virtual int32_t mipmapped_array_level(uint64_t mipmap, unsigned level, uint64_t* array) = 0;
  // extent: width in elements when a side is an array, else in bytes.
  virtual int32_t memcpy3d_async(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind kind,
                                 uint64_t stream) = 0;
  // Descriptors name arrays by the handles above and memory by device address.
  virtual int32_t texture_create(uint64_t* texture, const cudaResourceDesc& resource, const cudaTextureDesc& texture_desc,
                                 const cudaResourceViewDesc* view) = 0;
  virtual int32_t texture_destroy(uint64_t texture) = 0;
  virtual int32_t surface_create(uint64_t* surface, const cudaResourceDesc& resource) = 0;
  virtual int32_t surface_destroy(uint64_t surface) = 0;
  // Legacy texture and surface references: created, found in a module (the
  // worker checked the module), their properties set and read.
  virtual int32_t texref_create(uint64_t* ref) = 0;
  virtual int32_t texref_destroy(uint64_t ref) = 0;
  virtual int32_t module_get_reference(uint64_t module, const std::string& name, bool surface, uint64_t* ref) = 0;
  virtual int32_t reference_set(uint64_t ref, proto::RefAttr attr, const proto::RefValue& value,
                                proto::RefValue* out) = 0;
  virtual int32_t reference_get(uint64_t ref, proto::RefAttr attr, proto::RefValue* value) = 0;
};

}  // namespace rgpu::server
