// The device memory a session owns. Every pointer a client names in a copy or
// memset is checked here first, so a client can only touch its own memory.
// The threads serving one session's connections share it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace rgpu::server {

class AllocationTable {
 public:
  void add(uint64_t base, size_t size);
  // Returns the size freed, or 0 when base does not start an allocation.
  size_t remove(uint64_t base);
  // True when [ptr, ptr + n) lies inside one allocation.
  bool contains(uint64_t ptr, size_t n) const;
  // Every allocation (base, size), in address order.
  std::vector<std::pair<uint64_t, size_t>> list() const {
    std::lock_guard lock(mutex_);
    return {ranges_.begin(), ranges_.end()};
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return ranges_.size();
  }
  void clear() {
    std::lock_guard lock(mutex_);
    ranges_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> ranges_;
};

}  // namespace rgpu::server
