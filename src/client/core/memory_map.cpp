#include "client/core/memory_map.hpp"

#include "client/core/address_range_lookup.hpp"

namespace rgpu::client {

MemoryMap& MemoryMap::get() {
  static auto* m = new MemoryMap;
  return *m;
}

bool MemoryMap::add_device(uint64_t base, size_t size, int device) {
  std::lock_guard lock(mutex_);
  uint64_t last = base + (size ? size - 1 : 0);
  auto it = device_.upper_bound(last);
  if (it != device_.begin() && std::prev(it)->first + std::prev(it)->second.size > base) return false;
  device_[base] = DeviceRange{base, size, device};
  return true;
}

template <typename R>
std::optional<R> MemoryMap::remove(std::map<uint64_t, R>& m, uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = m.find(base);
  if (it == m.end()) return std::nullopt;
  R r = it->second;
  m.erase(it);
  return r;
}

std::optional<DeviceRange> MemoryMap::remove_device(uint64_t base) { return remove(device_, base); }

std::optional<DeviceRange> MemoryMap::find_device(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  return find_range(device_, ptr, n == 0 ? 1 : n);
}

void MemoryMap::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(device_, [device](const auto& kv) { return kv.second.device == device; });
}

void MemoryMap::add_host(uint64_t base, size_t size, unsigned flags, bool registered, int shared_fd) {
  std::lock_guard lock(mutex_);
  host_[base] = HostRange{base, size, flags, registered, shared_fd};
}

std::optional<HostRange> MemoryMap::find_shared(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  auto r = find_range(host_, ptr, n == 0 ? 1 : n);
  if (!r || r->shared_fd < 0) return std::nullopt;
  return r;
}

std::optional<HostRange> MemoryMap::remove_host(uint64_t base) { return remove(host_, base); }

std::optional<HostRange> MemoryMap::find_host(uint64_t ptr) const {
  std::lock_guard lock(mutex_);
  return find_range(host_, ptr, 1);
}

}  // namespace rgpu::client
