#include "client/core/kernel_launch.hpp"

#include <cuda.h>

#include <atomic>
#include <cstring>
#include <map>

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

namespace {

cudaError_t pack_extra(const LoadedKernel& k, void** extra, std::vector<uint8_t>* packed) {
  const void* buffer = nullptr;
  const size_t* size = nullptr;
  for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
      size = static_cast<const size_t*>(extra[i + 1]);
    else
      return cudaErrorInvalidValue;
  }
  if (!buffer || !size) return cudaErrorInvalidValue;
  // As NVIDIA's driver (seen on the H100): a buffer longer than the kernel's
  // parameters is refused, a shorter one launches (the rest is zero here,
  // unspecified there).
  if (*size > k.args_size) return cudaErrorLaunchOutOfResources;
  packed->assign(k.args_size, 0);
  std::memcpy(packed->data(), buffer, *size);
  return cudaSuccess;
}

}  // namespace

cudaError_t pack_launch_args(const LoadedKernel& k, void** params, void** extra, std::vector<uint8_t>* packed) {
  return extra ? pack_extra(k, extra, packed) : pack_kernel_args(k, params, packed);
}

namespace {

std::atomic<PageLockedReach> g_reach{nullptr};

}  // namespace

void set_page_locked_reach(PageLockedReach reach) { g_reach.store(reach, std::memory_order_release); }

cudaError_t reach_host_pointer_args(const MemoryMap& map, std::vector<uint8_t>* packed, int device,
                                    bool shares_memory) {
  map.follow_moved_variables(*packed);
  if (!map.may_hold_host_args(shares_memory)) return cudaSuccess;
  // Reached here, by base: later words still carry the range as it was.
  std::map<uint64_t, uint64_t> reached;
  for (auto [offset, range] : map.host_ranges_named(*packed)) {
    if (shares_memory && range.shared_fd >= 0) continue;
    if (range.coherent && !range.device_address) continue;  // its device address is its host address
    uint64_t word;
    std::memcpy(&word, packed->data() + offset, sizeof word);
    auto it = reached.find(range.base);
    if (it == reached.end()) {
      // Shared memory an shm server maps cannot be remapped under it.
      auto reach = g_reach.load(std::memory_order_acquire);
      if (range.registered || range.shared_fd >= 0 || !reach) {
        RGPU_LOG(warn, "kernel launch refused: an argument points at the application's page-locked memory (0x%llx): %s",
                 static_cast<unsigned long long>(word), kHostMemoryReach);
        return cudaErrorNotSupported;
      }
      uint64_t address;
      if (cudaError_t e = reach(range, device, &address)) return e;
      it = reached.emplace(range.base, address).first;
    }
    word = it->second + (word - range.base);
    std::memcpy(packed->data() + offset, &word, sizeof word);
  }
  return cudaSuccess;
}

}  // namespace rgpu::client
