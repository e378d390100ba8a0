#include "client/core/memory_map.hpp"

namespace rgpu::client {

MemoryMap& MemoryMap::get() {
  static auto* m = new MemoryMap;
  return *m;
}

template <typename R>
std::optional<R> MemoryMap::lookup(const std::map<uint64_t, R>& m, uint64_t ptr, size_t n) {
  auto it = m.upper_bound(ptr);
  if (it == m.begin()) return std::nullopt;
  --it;
  uint64_t offset = ptr - it->first;
  if (offset >= it->second.size || n > it->second.size - offset) return std::nullopt;
  return it->second;
}

void MemoryMap::add_device(uint64_t base, size_t size, int device) {
  std::lock_guard lock(mutex_);
  device_[base] = DeviceRange{base, size, device};
}

std::optional<DeviceRange> MemoryMap::remove_device(uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = device_.find(base);
  if (it == device_.end()) return std::nullopt;
  DeviceRange r = it->second;
  device_.erase(it);
  return r;
}

std::optional<DeviceRange> MemoryMap::find_device(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  return lookup(device_, ptr, n == 0 ? 1 : n);
}

void MemoryMap::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(device_, [device](const auto& kv) { return kv.second.device == device; });
}

void MemoryMap::add_host(uint64_t base, size_t size, unsigned flags, bool registered) {
  std::lock_guard lock(mutex_);
  host_[base] = HostRange{base, size, flags, registered};
}

std::optional<HostRange> MemoryMap::remove_host(uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = host_.find(base);
  if (it == host_.end()) return std::nullopt;
  HostRange r = it->second;
  host_.erase(it);
  return r;
}

std::optional<HostRange> MemoryMap::find_host(uint64_t ptr) const {
  std::lock_guard lock(mutex_);
  return lookup(host_, ptr, 1);
}

}  // namespace rgpu::client
