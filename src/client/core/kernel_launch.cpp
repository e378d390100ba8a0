#include "client/core/kernel_launch.hpp"

#include <cstring>

#include "client/core/host_memory_model.hpp"
#include "client/core/memory_map.hpp"
#include "common/log.hpp"

namespace rgpu::client {

cudaError_t check_launch_config(const cudaDeviceProp& p, dim3 grid, dim3 block) {
  if (block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0)
    return cudaErrorInvalidValue;
  if (static_cast<uint64_t>(block.x) * block.y * block.z > static_cast<uint64_t>(p.maxThreadsPerBlock) ||
      block.x > static_cast<unsigned>(p.maxThreadsDim[0]) || block.y > static_cast<unsigned>(p.maxThreadsDim[1]) ||
      block.z > static_cast<unsigned>(p.maxThreadsDim[2]))
    return cudaErrorInvalidValue;
  if (grid.x > static_cast<unsigned>(p.maxGridSize[0]) || grid.y > static_cast<unsigned>(p.maxGridSize[1]) ||
      grid.z > static_cast<unsigned>(p.maxGridSize[2]))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t pack_kernel_args(const LoadedKernel& k, void** args, std::vector<uint8_t>* packed) {
  if (!k.params.empty() && !args) return cudaErrorInvalidValue;
  packed->assign(k.args_size, 0);
  for (size_t i = 0; i < k.params.size(); ++i)
    std::memcpy(packed->data() + k.params[i].offset, args[i], k.params[i].size);
  return cudaSuccess;
}

cudaError_t check_host_pointer_args(const LoadedKernel& k, const std::vector<uint8_t>& packed,
                                    bool shares_memory) {
  // Each argument's look-up locks the memory map: skipped at once where all
  // page-locked memory is in the GPU's reach (none, shared over shm, mapped).
  if (!MemoryMap::get().may_hold_unreachable_host(shares_memory)) return cudaSuccess;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].size != sizeof(uint64_t)) continue;
    uint64_t v;
    std::memcpy(&v, packed.data() + k.params[i].offset, sizeof v);
    auto range = MemoryMap::get().find_host(v);
    if (!range || range->coherent || (shares_memory && range->shared_fd >= 0)) continue;
    RGPU_LOG(warn, "kernel launch refused: argument %zu points at the application's page-locked memory (0x%llx): %s",
             i, static_cast<unsigned long long>(v), kHostMemoryReach);
    return cudaErrorNotSupported;
  }
  return cudaSuccess;
}

}  // namespace rgpu::client
