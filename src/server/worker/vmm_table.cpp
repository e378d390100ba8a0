#include "server/worker/vmm_table.hpp"

#include <algorithm>
#include <iterator>

namespace rgpu::server {

void VmmTable::add_allocation(uint64_t handle, size_t size) {
  std::lock_guard lock(mutex_);
  allocations_[handle] = size;
}

bool VmmTable::remove_allocation(uint64_t handle) {
  std::lock_guard lock(mutex_);
  return allocations_.erase(handle) == 1;
}

std::optional<size_t> VmmTable::allocation_size(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(handle);
  if (it == allocations_.end()) return std::nullopt;
  return it->second;
}

void VmmTable::add_reservation(uint64_t base, size_t size) {
  std::lock_guard lock(mutex_);
  reservations_[base] = size;
}

bool VmmTable::remove_reservation(uint64_t base, size_t size) {
  std::lock_guard lock(mutex_);
  auto it = reservations_.find(base);
  if (it == reservations_.end() || it->second != size) return false;
  auto m = mappings_.lower_bound(base);
  if (m != mappings_.end() && m->first < base + size) return false;
  reservations_.erase(it);
  return true;
}

bool VmmTable::can_map(uint64_t base, size_t size) const {
  std::lock_guard lock(mutex_);
  if (size == 0) return false;
  auto r = reservations_.upper_bound(base);
  if (r == reservations_.begin()) return false;
  --r;
  if (base - r->first > r->second || size > r->second - (base - r->first)) return false;
  auto next = mappings_.lower_bound(base);
  if (next != mappings_.end() && next->first < base + size) return false;
  if (next != mappings_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > base) return false;
  }
  return true;
}

void VmmTable::add_mapping(const Mapping& m) {
  std::lock_guard lock(mutex_);
  mappings_[m.base] = m;
}

std::optional<std::vector<VmmTable::Mapping>> VmmTable::mappings_in(uint64_t base, size_t size) const {
  std::lock_guard lock(mutex_);
  std::vector<Mapping> out;
  uint64_t at = base, end = base + size;
  if (size == 0 || end < base) return std::nullopt;
  while (at < end) {
    auto it = mappings_.find(at);
    if (it == mappings_.end() || at + it->second.size > end) return std::nullopt;
    out.push_back(it->second);
    at += it->second.size;
  }
  return out;
}

void VmmTable::remove_mapping(uint64_t base) {
  std::lock_guard lock(mutex_);
  mappings_.erase(base);
}

void VmmTable::add_access(uint64_t base, size_t size) {
  std::lock_guard lock(mutex_);
  access_[base] = size;
}

std::vector<std::pair<uint64_t, size_t>> VmmTable::take_access(uint64_t base, size_t size, bool touching) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<uint64_t, size_t>> out;
  for (auto it = access_.begin(); it != access_.end();) {
    const uint64_t end = it->first + it->second;
    if (touching ? it->first <= base + size && base <= end : it->first < base + size && base < end) {
      out.emplace_back(it->first, it->second);
      it = access_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace rgpu::server

namespace rgpu::server {

bool VmmTable::reserved_over(uint64_t base, size_t size) const {
  std::lock_guard lock(mutex_);
  auto it = reservations_.lower_bound(base + size);
  return it != reservations_.begin() && std::prev(it)->first + std::prev(it)->second > base;
}

size_t VmmTable::imported() const {
  std::lock_guard lock(mutex_);
  return std::count_if(allocations_.begin(), allocations_.end(), [](const auto& a) { return a.second == 0; });
}

bool VmmTable::accessible(uint64_t base, size_t size) const {
  std::lock_guard lock(mutex_);
  auto it = access_.upper_bound(base);
  if (it == access_.begin()) return false;
  --it;
  return base - it->first <= it->second && size <= it->second - (base - it->first);
}

}  // namespace rgpu::server
