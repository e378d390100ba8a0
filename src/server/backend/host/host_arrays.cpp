#include "server/backend/host/host_arrays.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "protocol/channel_format.hpp"

namespace rgpu::server {
namespace {

size_t at_least_one(size_t n) { return std::max<size_t>(n, 1); }

constexpr size_t kMaxArrayBytes = 4ull << 30;  // the test device's memory, for all arrays together

// The bytes an array of `spec` takes, laid out row by row, slice by slice.
size_t array_bytes(const ArraySpec& spec) {
  const cudaExtent& e = spec.extent;
  return proto::channel_element_size(spec.format) * at_least_one(e.width) * at_least_one(e.height) *
         at_least_one(e.depth);
}

// Level l of a mipmapped array: each dimension halved l times, never below
// one; the layer count of layered and cubemap arrays stays.
ArraySpec level_spec(const ArraySpec& spec, unsigned l) {
  ArraySpec level = spec;
  cudaExtent& e = level.extent;
  bool layers = spec.flags & (cudaArrayLayered | cudaArrayCubemap);
  e = {e.width ? at_least_one(e.width >> l) : 0, e.height ? at_least_one(e.height >> l) : 0,
       e.depth && !layers ? at_least_one(e.depth >> l) : e.depth};
  return level;
}

// Where one side of a copy starts, and its row and slice strides in bytes.
struct Layout {
  uint8_t* first;
  size_t row, slice;
};

Layout layout(const CopySide& side) {
  if (side.array) {
    auto* a = reinterpret_cast<HostArrays::Array*>(side.array);
    size_t row = a->element * at_least_one(a->spec.extent.width);
    size_t slice = row * at_least_one(a->spec.extent.height);
    return {a->data + side.pos.z * slice + side.pos.y * row + side.pos.x * a->element, row, slice};
  }
  size_t slice = side.pitch * side.rows;
  return {static_cast<uint8_t*>(side.ptr) + side.pos.z * slice + side.pos.y * side.pitch + side.pos.x, side.pitch,
          slice};
}

}  // namespace

std::shared_ptr<void> HostArrays::reserve(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t n = (std::max<size_t>(bytes, 1) + page - 1) / page * page;
  if (n > kMaxArrayBytes) return nullptr;
  if (own_bytes_.fetch_add(n) > kMaxArrayBytes - n) {
    own_bytes_ -= n;
    return nullptr;
  }
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    own_bytes_ -= n;
    return nullptr;
  }
  return {p, [this, n](void* p) {
            munmap(p, n);
            own_bytes_ -= n;
          }};
}

std::unique_ptr<HostArrays::Array> HostArrays::make_array(const ArraySpec& spec, uint8_t* storage,
                                                          std::shared_ptr<void> keep) {
  auto a = std::make_unique<HostArrays::Array>();
  a->spec = spec;
  a->element = proto::channel_element_size(spec.format);
  if (!storage) {
    keep = reserve(array_bytes(spec));
    if (!keep) return nullptr;
    storage = static_cast<uint8_t*>(keep.get());
  }
  a->data = storage;
  a->keep = std::move(keep);
  return a;
}

int32_t HostArrays::array_create(const ArraySpec& spec, uint64_t* array) {
  auto a = make_array(spec);
  if (!a) return cudaErrorMemoryAllocation;
  std::lock_guard lock(mutex_);
  *array = reinterpret_cast<uint64_t>(a.get());
  arrays_[*array] = std::move(a);
  return cudaSuccess;
}

int32_t HostArrays::array_destroy(uint64_t array) {
  std::lock_guard lock(mutex_);
  return arrays_.erase(array) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

int32_t HostArrays::mipmapped_array_create(const ArraySpec& spec, unsigned levels, uint64_t* mipmap) {
  return make_mipmap(spec, levels, nullptr, 0, nullptr, mipmap);
}

int32_t HostArrays::mipmapped_array_over(const ArraySpec& spec, unsigned levels, uint8_t* storage, size_t available,
                                         std::shared_ptr<void> keep, uint64_t* mipmap) {
  return make_mipmap(spec, levels, storage, available, std::move(keep), mipmap);
}

// Levels follow each other in `storage` when there is one.
int32_t HostArrays::make_mipmap(const ArraySpec& spec, unsigned levels, uint8_t* storage, size_t available,
                                std::shared_ptr<void> keep, uint64_t* mipmap) {
  std::vector<std::unique_ptr<Array>> made;
  size_t used = 0;
  for (unsigned l = 0; l < levels; ++l) {
    ArraySpec level = level_spec(spec, l);
    size_t bytes = array_bytes(level);
    if (storage && bytes > available - used) return cudaErrorInvalidValue;
    made.push_back(storage ? make_array(level, storage + used, keep) : make_array(level));
    if (!made.back()) return cudaErrorMemoryAllocation;
    used += bytes;
  }
  std::lock_guard lock(mutex_);
  *mipmap = next_object_++;
  mipmaps_[*mipmap] = std::move(made);
  return cudaSuccess;
}

int32_t HostArrays::mipmapped_array_destroy(uint64_t mipmap) {
  std::lock_guard lock(mutex_);
  return mipmaps_.erase(mipmap) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

int32_t HostArrays::mipmapped_array_level(uint64_t mipmap, unsigned level, uint64_t* array) {
  std::lock_guard lock(mutex_);
  auto it = mipmaps_.find(mipmap);
  if (it == mipmaps_.end()) return cudaErrorInvalidResourceHandle;
  if (level >= it->second.size()) return cudaErrorInvalidValue;
  *array = reinterpret_cast<uint64_t>(it->second[level].get());
  return cudaSuccess;
}

// Work runs at once, in order, as everywhere in this backend.
int32_t HostArrays::memcpy3d_async(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind,
                                   uint64_t) {
  const CopySide& with_array = dst.array ? dst : src;
  size_t width = extent.width;
  if (with_array.array) width *= reinterpret_cast<Array*>(with_array.array)->element;
  Layout d = layout(dst), s = layout(src);
  for (size_t z = 0; z < extent.depth; ++z)
    for (size_t y = 0; y < extent.height; ++y)
      std::memmove(d.first + z * d.slice + y * d.row, s.first + z * s.slice + y * s.row, width);
  return cudaSuccess;
}

size_t HostArrays::element_of(uint64_t array) {
  std::lock_guard lock(mutex_);
  if (auto it = arrays_.find(array); it != arrays_.end()) return it->second->element;
  for (const auto& [mipmap, levels] : mipmaps_)
    for (const auto& level : levels)
      if (reinterpret_cast<uint64_t>(level.get()) == array) return level->element;
  return 0;
}

int32_t HostArrays::texture_create(uint64_t* texture, const cudaResourceDesc&, const cudaTextureDesc&,
                                   const cudaResourceViewDesc*) {
  std::lock_guard lock(mutex_);
  *texture = next_object_++;
  textures_.insert(*texture);
  return cudaSuccess;
}

int32_t HostArrays::texture_destroy(uint64_t texture) {
  std::lock_guard lock(mutex_);
  return textures_.erase(texture) ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t HostArrays::surface_create(uint64_t* surface, const cudaResourceDesc&) {
  std::lock_guard lock(mutex_);
  *surface = next_object_++;
  surfaces_.insert(*surface);
  return cudaSuccess;
}

int32_t HostArrays::surface_destroy(uint64_t surface) {
  std::lock_guard lock(mutex_);
  return surfaces_.erase(surface) ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t HostArrays::texref_create(uint64_t* ref) {
  std::lock_guard lock(mutex_);
  *ref = next_object_++;
  references_[*ref];
  return cudaSuccess;
}

int32_t HostArrays::texref_destroy(uint64_t ref) {
  std::lock_guard lock(mutex_);
  return references_.erase(ref) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

// nvcc has emitted no texture or surface references since CUDA 12: no
// module this backend loads declares one.
int32_t HostArrays::module_get_reference(uint64_t, const std::string&, bool, uint64_t*) {
  return cudaErrorSymbolNotFound;
}

namespace {

std::pair<proto::RefAttr, int32_t> key(proto::RefAttr attr, const proto::RefValue& v) {
  return {attr, attr == proto::RefAttr::address_mode ? v.a : 0};
}

}  // namespace

int32_t HostArrays::reference_set(uint64_t ref, proto::RefAttr attr, const proto::RefValue& value,
                                  proto::RefValue* out) {
  std::lock_guard lock(mutex_);
  auto it = references_.find(ref);
  if (it == references_.end()) return cudaErrorInvalidResourceHandle;
  it->second[key(attr, value)] = value;
  if (attr == proto::RefAttr::address_2d) it->second[key(proto::RefAttr::address, value)] = value;
  *out = {};  // bound at the address given: no offset
  return cudaSuccess;
}

int32_t HostArrays::reference_get(uint64_t ref, proto::RefAttr attr, proto::RefValue* value) {
  std::lock_guard lock(mutex_);
  auto it = references_.find(ref);
  if (it == references_.end()) return cudaErrorInvalidResourceHandle;
  auto found = it->second.find(key(attr, *value));
  if (found != it->second.end()) *value = found->second;
  return cudaSuccess;
}

}  // namespace rgpu::server
