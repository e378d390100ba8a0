// Client records of CUDA arrays, mipmapped arrays, texture and surface
// objects. The application's cudaArray_t and cudaMipmappedArray_t point at
// records saying which device owns the server object and what it is (format,
// extent, flags: what cudaArrayGetInfo answers without a round trip).
// Texture and surface objects are the server's own values, since kernels
// read them; their records keep the descriptors the application gave, for
// the Get*Desc queries.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace rgpu::client {

struct ArrayObject {
  int device;
  uint64_t remote;
  cudaChannelFormatDesc format;
  cudaExtent extent;  // elements, as created (height, depth 0 when absent)
  unsigned flags;
  size_t element;             // bytes per element
  cudaMipmappedArray_t owner;  // for a level of a mipmapped array: that array
};

// Whether `a` holds the region of `width` bytes, `height` rows and `depth`
// slices from byte x, row y, slice z (a missing height or depth is 1), on
// its element bounds.
bool array_holds(const ArrayObject& a, size_t x, size_t y, size_t z, size_t width, size_t height, size_t depth);

struct MipmapObject {
  int device;
  uint64_t remote;
  cudaChannelFormatDesc format;
  cudaExtent extent;
  unsigned flags;
  unsigned levels;
};

struct TextureObject {
  int device;
  cudaResourceDesc resource;  // as the application gave it
  cudaTextureDesc texture;
  std::optional<cudaResourceViewDesc> view;
};

// Records behind opaque pointers; a handle the client never made is not found.
template <typename Record, typename Handle>
class ObjectRegistry {
 public:
  Handle add(const Record& r) {
    auto* o = new Record(r);
    std::lock_guard lock(mutex_);
    live_[o] = o;
    return reinterpret_cast<Handle>(o);
  }
  std::optional<Record> find(Handle h) const {
    std::lock_guard lock(mutex_);
    auto it = live_.find(reinterpret_cast<const void*>(h));
    if (it == live_.end()) return std::nullopt;
    return *it->second;
  }
  bool remove(Handle h) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(reinterpret_cast<const void*>(h));
    if (it == live_.end()) return false;
    delete it->second;
    live_.erase(it);
    return true;
  }
  // The handles whose record satisfies `pred`.
  template <typename Pred>
  std::vector<Handle> select(Pred pred) const {
    std::lock_guard lock(mutex_);
    std::vector<Handle> out;
    for (auto& [h, r] : live_)
      if (pred(*r)) out.push_back(reinterpret_cast<Handle>(const_cast<void*>(h)));
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const void*, Record*> live_;
};

// Texture or surface objects by value. Servers number their objects each on
// its own, so two devices may hand out one value: a lookup prefers the
// current device's.
class ObjectValues {
 public:
  void add(uint64_t value, const TextureObject& r);
  std::optional<TextureObject> find(uint64_t value) const;
  bool remove(uint64_t value, int device);
  void forget_device(int device);

 private:
  mutable std::mutex mutex_;
  std::multimap<uint64_t, TextureObject> live_;
};

ObjectRegistry<ArrayObject, cudaArray_t>& arrays();
ObjectRegistry<MipmapObject, cudaMipmappedArray_t>& mipmapped_arrays();
ObjectValues& texture_objects();
ObjectValues& surface_objects();

// After a device reset: the server destroyed the device's objects.
void forget_array_objects(int device);

}  // namespace rgpu::client
