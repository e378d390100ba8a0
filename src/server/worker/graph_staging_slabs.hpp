// Page-locked memory of the worker's where graph copies of pageable
// application memory are staged when the worker cannot reach the
// application's memory (tcp, ucx; client/graph/staged_copy.hpp): the
// graph's copy node moves the bytes between the device and a block of it,
// and its host node between the block and the callback connection
// (host_callbacks.hpp). The client carves blocks out of slabs it asked for;
// every node naming a block is checked to lie inside one slab. Slabs count
// against the session's page-locked host memory (max-session-host-memory)
// and stay until the session ends or their device is reset.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>

#include "server/backend/backend.hpp"
#include "server/worker/allocation_table.hpp"
#include "server/pool/memory_limit.hpp"

namespace rgpu::server {

class GraphStagingSlabs {
 public:
  GraphStagingSlabs(Backend& backend, MemoryLimit& limit) : backend_(backend), limit_(limit) {}
  ~GraphStagingSlabs();
  GraphStagingSlabs(const GraphStagingSlabs&) = delete;
  GraphStagingSlabs& operator=(const GraphStagingSlabs&) = delete;

  // A slab of `bytes` for `device`'s graphs: its address in *base.
  int32_t allocate(int device, uint64_t bytes, uint64_t* base);
  // Frees `device`'s slabs ahead of its reset, which would free them under
  // the nodes still naming them: those nodes are refused from then on.
  void release(int device);
  // True when [ptr, ptr + n) lies inside one slab.
  bool contains(uint64_t ptr, uint64_t n) const { return n && table_.contains(ptr, n); }

 private:
  Backend& backend_;
  MemoryLimit& limit_;
  AllocationTable table_;
  std::mutex mutex_;
  std::multimap<int, void*> slabs_;  // by device
};

}  // namespace rgpu::server
