#include "server/worker/allocation_table.hpp"

namespace rgpu::server {

void AllocationTable::add(uint64_t base, size_t size) {
  std::lock_guard lock(mutex_);
  ranges_[base] = size;
}

size_t AllocationTable::remove(uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return 0;
  size_t size = it->second;
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
