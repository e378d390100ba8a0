#include "client/core/kernel_launch.hpp"

#include <cstring>

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

}  // namespace rgpu::client
