// The handles of virtual memory management (virtual_memory.cpp) as the
// generated driver stubs need them: the client numbers the application holds
// stand for handles of one server's driver.
#pragma once
#include "client/cuda/cuda_api.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace rgpu::client {

// The server's handle behind `handle` and the device it was made on: a
// physical allocation of cuMemCreate, or with `multicast` a multicast object
// of cuMulticastCreate. False for any other handle.
bool vmm_handle_remote(CUmemGenericAllocationHandle handle, bool multicast, int* device, uint64_t* remote);

// A device's virtual memory as the application made it: what a session move
// makes again on its target (docs/migration.md).
struct VirtualMemoryLayout {
  struct Made {
    uint64_t remote;
    size_t size;  // 0: imported from another process
    CUmemAllocationProp prop;
  };
  struct Mapped {
    uint64_t base;
    size_t size;
    uint64_t remote;  // the allocation mapped there
  };
  std::vector<std::pair<uint64_t, size_t>> reservations;
  std::vector<Made> allocations;  // multicast objects left out
  std::vector<Mapped> mappings;
  std::vector<std::pair<uint64_t, size_t>> access;  // read-write ranges, in address order
};
VirtualMemoryLayout virtual_memory_of(int device);
// The device's session moved: its allocations are the target's (old server handle -> new).
void virtual_memory_moved(int device, const std::map<uint64_t, uint64_t>& remote_now);

}  // namespace rgpu::client
