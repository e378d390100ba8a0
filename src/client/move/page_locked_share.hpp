// The application's page-locked memory across a session move (shm): shared
// with the new worker, which must map it at the application's own address,
// where the GPU reached it before (the old worker's check lets only such
// mapped memory move).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rgpu::client {

class Session;

// A range shared with a worker, and which memory file it is (a freed
// range's address and descriptor number may come back with another file).
struct SharedRange {
  uint64_t base;
  size_t size;
  int fd;
  ino_t file;
  bool operator==(const SharedRange&) const = default;
};

// Shares the page-locked memory with `to` (nothing unless it shares
// memory). `before`: what an earlier call shared; what was freed since is
// let go there. What is shared now. Refuses (MoveRefusal) what the target
// cannot map at its address.
std::vector<SharedRange> share_page_locked(Session& to, int gpu, const std::vector<SharedRange>& before);

}  // namespace rgpu::client
