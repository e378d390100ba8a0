// Managed memory. Over shm (every server on this host) an allocation is
// shared memory mapped at the same address in the application and in each
// worker, where the GPU maps it too (zero-copy): one address is valid on
// the host and on the device, and both always see the same pages, so the
// memory is coherent at all times (GPU accesses cross PCIe; nothing
// migrates). Where a server is reached over another transport, it is device
// memory with a software-coherent copy here (coherent_memory.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>

namespace rgpu::client {

// One managed allocation and the hints given for it, which rgpu records and
// reports (cudaMemRangeGetAttribute) but needs not act on.
struct ManagedRange {
  uint64_t base = 0;
  size_t size = 0;
  int device = 0;  // the device that was current at allocation
  int fd = -1;  // -1: device memory with a coherent copy here
  // A module's or library's managed variable: the server driver's memory,
  // coherent here on every transport; cudaFree refuses it.
  bool variable = false;
  bool read_mostly = false;
  cudaMemLocation preferred{cudaMemLocationTypeInvalid, 0};
  cudaMemLocation last_prefetch{cudaMemLocationTypeInvalid, 0};
  std::set<int> accessed_by;
};

// The managed allocation holding [ptr, ptr + n), if any.
std::optional<ManagedRange> find_managed(uint64_t ptr, size_t n = 1);
// Runs update on the allocation holding ptr; false when there is none.
bool update_managed(uint64_t ptr, const std::function<void(ManagedRange&)>& update);
// cudaFree of a managed allocation (base must start one).
cudaError_t free_managed(uint64_t base);
// The managed variable the server reported at [address, address + size) on
// `device` (of a module, a library or the application's fat binaries) made
// reachable by the host at that address (coherent_memory.hpp); again for
// one already reachable changes nothing.
cudaError_t add_managed_variable(uint64_t address, size_t size, int device);
// Its module is unloaded: the host no longer reaches it.
void remove_managed_variable(uint64_t address);

}  // namespace rgpu::client
