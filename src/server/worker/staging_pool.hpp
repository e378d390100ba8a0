// Page-locked buffers that bulk copies stream through: while the network
// fills one block, the GPU copies another. Each slot carries an event that
// says when the GPU is done with it. Their sizes follow the client's block
// size and row widths, so they count against the session's page-locked
// host memory (max-session-host-memory).
#pragma once
#include <cstddef>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/pool/memory_limit.hpp"

namespace rgpu::server {

class StagingPool {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kBlockBytes = 4u << 20;

  StagingPool(Backend& backend, MemoryLimit& limit) : backend_(backend), limit_(limit) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  struct Slot {
    void* buffer = nullptr;
    size_t capacity = 0;
    Handle event = 0;
    bool in_flight = false;  // the GPU may still be using the buffer
  };

  // Slot i (round-robin), at least `bytes` large, once the GPU is done with
  // it. Returns a CUDA error if waiting or allocating failed, or
  // cudaErrorMemoryAllocation past the session's page-locked memory.
  int32_t acquire(size_t i, size_t bytes, Slot** out);
  // Marks the slot busy until the work queued so far on `stream` completes.
  int32_t release_after(Slot& slot, Handle stream);
  // Forgets buffers and events that a device reset already destroyed.
  void abandon();

 private:
  Backend& backend_;
  MemoryLimit& limit_;
  Slot slots_[kSlots];
};

}  // namespace rgpu::server
