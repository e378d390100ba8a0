// A moved session's virtual memory (cuMemCreate & co., docs/migration.md):
// each reservation made again at its address on the target (in a hole of
// the span that keeps the session's allocations' addresses, where it lay
// between them), each physical allocation made with its properties and
// mapped where it was, the read-write ranges opened again. Their contents
// move with the rest of the memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace rgpu::client {

class Session;

struct CarriedVirtualMemory {
  std::map<uint64_t, uint64_t> allocations;  // the old server's handle -> the target's
  std::vector<std::pair<uint64_t, size_t>> contents;  // the ranges to copy, in address order
};

// Refuses (MoveRefusal) when the target cannot make it at its addresses.
// In the pause: virtual memory changes without any call the move sees.
CarriedVirtualMemory carry_virtual_memory(Session& to, int gpu, int device);

}  // namespace rgpu::client
