#include "server/worker/allocation_table.hpp"

namespace rgpu::server {

bool AllocationTable::reserve(uint64_t size) {
  std::lock_guard lock(mutex_);
  if (limit_ && (size > limit_ || held_ > limit_ - size)) return false;
  held_ += size;
  reserved_ += size;
  return true;
}

void AllocationTable::release(uint64_t size) {
  std::lock_guard lock(mutex_);
  held_ -= size;
  reserved_ -= size;
}

void AllocationTable::add(uint64_t base, size_t size) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = ranges_.try_emplace(base, size);
  if (!fresh) {
    held_ -= it->second;
    it->second = size;
  }
  held_ += size;
}

size_t AllocationTable::remove(uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return 0;
  size_t size = it->second;
  held_ -= size;
  ranges_.erase(it);
  return size;
}

bool AllocationTable::contains(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  auto it = ranges_.upper_bound(ptr);
  if (it == ranges_.begin()) return false;
  --it;
  uint64_t offset = ptr - it->first;
  return offset <= it->second && n <= it->second - offset;
}

}  // namespace rgpu::server
