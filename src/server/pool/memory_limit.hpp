// Bytes one session may hold against one of its limits: its device memory
// (max-session-memory, session_quota.hpp) or the page-locked host memory a
// client makes its worker hold, sized by the client: graph staging slabs
// (tcp, ucx), copy staging buffers, and over shm the client's shared
// page-locked and managed memory the worker pins (max-session-host-memory:
// pinned pages cannot be swapped, so an unbounded client could take the
// host's memory from every other session and the daemon).
#pragma once
#include <cstdint>
#include <mutex>

namespace rgpu::server {

class MemoryLimit {
 public:
  // `setting`: the limit's name, for the log.
  explicit MemoryLimit(const char* setting) : setting_(setting) {}
  // 0: no limit. Set before the first hold.
  void set_limit(uint64_t bytes) { limit_ = bytes; }
  uint64_t limit() const { return limit_; }
  // Holds `bytes` of `what` until give_back; false (logged with the limit)
  // past the limit. Checked and taken under one lock, so threads asking at
  // once cannot together pass it.
  bool hold(uint64_t bytes, const char* what);
  void give_back(uint64_t bytes);
  uint64_t held() const;

 private:
  const char* setting_;
  uint64_t limit_ = 0;
  mutable std::mutex mutex_;
  uint64_t held_ = 0;
};

// Bytes held against a limit while a request's handler needs them (a
// module image it received whole), given back when it ends.
class MemoryHold {
 public:
  explicit MemoryHold(MemoryLimit& limit) : limit_(limit) {}
  ~MemoryHold() {
    if (bytes_) limit_.give_back(bytes_);
  }
  MemoryHold(const MemoryHold&) = delete;
  MemoryHold& operator=(const MemoryHold&) = delete;
  // As MemoryLimit::hold; what it takes stays held until the end.
  bool take(uint64_t bytes, const char* what) {
    if (!limit_.hold(bytes, what)) return false;
    bytes_ += bytes;
    return true;
  }

 private:
  MemoryLimit& limit_;
  uint64_t bytes_ = 0;
};

}  // namespace rgpu::server
