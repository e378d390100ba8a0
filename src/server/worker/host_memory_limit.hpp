// Page-locked host memory a client makes its worker hold, sized by the
// client: graph staging slabs (tcp, ucx), and over shm the client's shared
// page-locked and managed memory the worker pins. Bounded per session by
// max-session-host-memory: pinned pages cannot be swapped, so an unbounded
// client could take the host's memory from every other session and the
// daemon.
#pragma once
#include <cstdint>
#include <mutex>

namespace rgpu::server {

class HostMemoryLimit {
 public:
  // 0: no limit. Set before the first hold.
  void set_limit(uint64_t bytes) { limit_ = bytes; }
  // Holds `bytes` of `what` until give_back; false (logged with the limit)
  // past the limit. Checked and taken under one lock, so threads asking at
  // once cannot together pass it.
  bool hold(uint64_t bytes, const char* what);
  void give_back(uint64_t bytes);

 private:
  uint64_t limit_ = 0;
  std::mutex mutex_;
  uint64_t held_ = 0;
};

}  // namespace rgpu::server
