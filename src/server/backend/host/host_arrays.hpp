// TEST BACKEND part: CUDA arrays as host memory laid out row by row, slice by
// slice; texture and surface objects as numbers, texture references as the
// properties set on them (kernels never run here, so nothing samples them).
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/backend/array_api.hpp"

namespace rgpu::server {

class HostArrays final : public ArrayApi {
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
  int32_t texref_create(uint64_t* ref) override;
  int32_t texref_destroy(uint64_t ref) override;
  int32_t module_get_reference(uint64_t module, const std::string& name, bool surface, uint64_t* ref) override;
  int32_t reference_set(uint64_t ref, proto::RefAttr attr, const proto::RefValue& value,
                        proto::RefValue* out) override;
  int32_t reference_get(uint64_t ref, proto::RefAttr attr, proto::RefValue* value) override;

  // A mipmapped array whose levels lie one after the other in `storage`
  // (external memory, `available` bytes of it; `keep` holds it mapped).
  int32_t mipmapped_array_over(const ArraySpec& spec, unsigned levels, uint8_t* storage, size_t available,
                               std::shared_ptr<void> keep, uint64_t* mipmap);

  // Bytes per element of a live array (a mipmapped array's level
  // included), 0 for one that is gone.
  size_t element_of(uint64_t array);

  struct Array {
    ArraySpec spec;
    size_t element;
    uint8_t* data = nullptr;     // its bytes
    std::shared_ptr<void> keep;  // the memory they lie in: its own, or external memory
  };

 private:
  // Null when the array would not fit the test device (the worker has
  // checked that its size does not overflow). With `storage`, the array's
  // bytes are there, in memory `keep` holds, rather than its own.
  std::unique_ptr<Array> make_array(const ArraySpec& spec, uint8_t* storage = nullptr,
                                    std::shared_ptr<void> keep = nullptr);
  // `bytes` of memory of the arrays' own, mapped (pages are taken only once
  // written); null when all arrays together would pass the test device's
  // memory.
  std::shared_ptr<void> reserve(size_t bytes);

  int32_t make_mipmap(const ArraySpec& spec, unsigned levels, uint8_t* storage, size_t available,
                      std::shared_ptr<void> keep, uint64_t* mipmap);

  std::mutex mutex_;
  std::unordered_map<uint64_t, std::unique_ptr<Array>> arrays_;  // by handle (the Array's address)
  std::unordered_map<uint64_t, std::vector<std::unique_ptr<Array>>> mipmaps_;  // by handle: its levels
  std::unordered_set<uint64_t> textures_, surfaces_;
  // Texture references: what was set, by property (and dimension, for
  // address modes).
  std::unordered_map<uint64_t, std::map<std::pair<proto::RefAttr, int32_t>, proto::RefValue>> references_;
  uint64_t next_object_ = 1;
  std::atomic<size_t> own_bytes_{0};  // mapped by reserve, not yet released
};

}  // namespace rgpu::server
