#include "client/core/array_objects.hpp"

#include <algorithm>

#include "client/core/runtime.hpp"

namespace rgpu::client {

void ObjectValues::add(uint64_t value, const TextureObject& r) {
  std::lock_guard lock(mutex_);
  live_.emplace(value, r);
}

std::optional<TextureObject> ObjectValues::find(uint64_t value) const {
  std::lock_guard lock(mutex_);
  auto [first, last] = live_.equal_range(value);
  if (first == last) return std::nullopt;
  int current = Runtime::current_device();
  for (auto it = first; it != last; ++it)
    if (it->second.device == current) return it->second;
  return first->second;
}

bool ObjectValues::remove(uint64_t value, int device) {
  std::lock_guard lock(mutex_);
  auto [first, last] = live_.equal_range(value);
  for (auto it = first; it != last; ++it)
    if (it->second.device == device) {
      live_.erase(it);
      return true;
    }
  return false;
}

void ObjectValues::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(live_, [&](const auto& v) { return v.second.device == device; });
}

bool array_holds(const ArrayObject& a, size_t x, size_t y, size_t z, size_t width, size_t height, size_t depth) {
  const size_t row_bytes = a.extent.width * a.element;
  const size_t rows = std::max<size_t>(a.extent.height, 1), layers = std::max<size_t>(a.extent.depth, 1);
  return x % a.element == 0 && width % a.element == 0 && x <= row_bytes && width <= row_bytes - x && y <= rows &&
         height <= rows - y && z <= layers && depth <= layers - z;
}

ObjectRegistry<ArrayObject, cudaArray_t>& arrays() {
  static auto* r = new ObjectRegistry<ArrayObject, cudaArray_t>;
  return *r;
}

ObjectRegistry<MipmapObject, cudaMipmappedArray_t>& mipmapped_arrays() {
  static auto* r = new ObjectRegistry<MipmapObject, cudaMipmappedArray_t>;
  return *r;
}

ObjectValues& texture_objects() {
  static auto* r = new ObjectValues;
  return *r;
}

ObjectValues& surface_objects() {
  static auto* r = new ObjectValues;
  return *r;
}

void forget_array_objects(int device) {
  for (cudaArray_t a : arrays().select([&](const ArrayObject& r) { return r.device == device; })) arrays().remove(a);
  for (cudaMipmappedArray_t m : mipmapped_arrays().select([&](const MipmapObject& r) { return r.device == device; }))
    mipmapped_arrays().remove(m);
  texture_objects().forget_device(device);
  surface_objects().forget_device(device);
}

}  // namespace rgpu::client
