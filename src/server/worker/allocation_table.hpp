// The device memory a session owns. Every pointer a client names in a copy or
// memset is checked here first, so a client can only touch its own memory.
// The threads serving one session's connections share it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace rgpu::server {

class AllocationTable {
 public:
  // The most bytes the session may hold here (max-session-memory; 0: no
  // limit).
  void set_limit(uint64_t bytes) { limit_ = bytes; }
  uint64_t limit() const { return limit_; }
  // Holds `size` bytes against the limit while they are allocated; false
  // when they would pass it. Held bytes are given back with release(),
  // once the allocation failed or was recorded with add().
  bool reserve(uint64_t size);
  void release(uint64_t size);
  void add(uint64_t base, size_t size);
  // Returns the size freed, or 0 when base does not start an allocation.
  size_t remove(uint64_t base);
  // True when [ptr, ptr + n) lies inside one allocation.
  bool contains(uint64_t ptr, size_t n) const;
  void clear() {
    std::lock_guard lock(mutex_);
    ranges_.clear();
    held_ = reserved_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> ranges_;
  uint64_t limit_ = 0;
  uint64_t held_ = 0;      // recorded allocations and reservations
  uint64_t reserved_ = 0;  // reservations alone
};

// A reservation for one allocation, given back when it goes out of scope
// (by then the allocation failed, or add() counts it).
class MemoryReservation {
 public:
  MemoryReservation(AllocationTable& table, uint64_t size)
      : table_(table), size_(size), held_(table.reserve(size)) {}
  ~MemoryReservation() {
    if (held_) table_.release(size_);
  }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  explicit operator bool() const { return held_; }

 private:
  AllocationTable& table_;
  uint64_t size_;
  bool held_;
};

}  // namespace rgpu::server
