// Kernel launches and per-kernel queries. Arguments are packed at the offsets
// the server's driver reported for the kernel and sent without a round trip.
#include <cuda_runtime_api.h>

#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/module_registry.hpp"
#include "client/core/per_thread_stream.hpp"
#include "client/core/runtime.hpp"
#include "client/core/thread_resident.hpp"
#include "client/cuda/kernel_attributes.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "protocol/wire_enum.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
};
ThreadResident<std::vector<CallConfiguration>> t_configs;

cudaError_t launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem, cudaStream_t stream,
                   bool cooperative = false) {
  return launch_kernel(func, {.grid = grid,
                             .block = block,
                             .shared_mem = shared_mem,
                             .stream = stream,
                             .params = args,
                             .cooperative = cooperative});
}

}  // namespace

extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                struct CUstream_st* stream) {
  t_configs->push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

extern "C" cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                  void* stream) {
  if (t_configs->empty()) return cudaErrorMissingConfiguration;
  CallConfiguration c = t_configs->back();
  t_configs->pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

extern "C" cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  return api([&]() -> cudaError_t {
    if (!kernel) return cudaErrorInvalidValue;
    KernelEntry* k = ModuleRegistry::get().find_kernel(func);
    if (!k) return cudaErrorInvalidDeviceFunction;
    // Our cudaKernel_t is the registry entry: find_kernel accepts it too.
    *kernel = reinterpret_cast<cudaKernel_t>(k);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                          size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch(kernel, gridDim, blockDim, args, sharedMem, stream); });
}

extern "C" cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                               size_t sharedMem, cudaStream_t stream) {
  PerThreadStreamScope scope;
  return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

extern "C" cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch(func, gridDim, blockDim, args, sharedMem, stream); });
}

extern "C" cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return api([&]() -> cudaError_t {
    if (!config || (config->numAttrs && !config->attrs)) return cudaErrorInvalidValue;
    KernelLaunch l{.grid = config->gridDim,
                   .block = config->blockDim,
                   .shared_mem = config->dynamicSmemBytes,
                   .stream = config->stream,
                   .params = args};
    l.attributes = {config->attrs, config->numAttrs};
    return launch_kernel(func, l);
  });
}

extern "C" cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                   size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch(func, gridDim, blockDim, args, sharedMem, stream, true); });
}

extern "C" cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  return api([&]() -> cudaError_t {
    if (!attr) return cudaErrorInvalidValue;
    return kernel_attributes(func, Runtime::current_device(), attr);
  });
}

extern "C" cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  return cudaKernelSetAttributeForDevice(reinterpret_cast<cudaKernel_t>(const_cast<void*>(func)), attr, value,
                                         Runtime::current_device());
}

extern "C" cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute attr, int value,
                                                       int device) {
  return api([&] { return set_kernel_attribute(kernel, device, attr, value); });
}

extern "C" cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
  return api([&] { return set_kernel_cache_config(func, Runtime::current_device(), cacheConfig); });
}

extern "C" cudaError_t cudaFuncSetSharedMemConfig(const void* func, cudaSharedMemConfig config) {
  return api([&] {
    return set_kernel_shared_mem_config(func, Runtime::current_device(), proto::enum_number(config));
  });
}

extern "C" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                              int blockSize,
                                                                              size_t dynamicSMemSize,
                                                                              unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!numBlocks) return cudaErrorInvalidValue;
    return kernel_occupancy(func, Runtime::current_device(), {blockSize, dynamicSMemSize, flags}, numBlocks);
  });
}

extern "C" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                     int blockSize, size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                cudaOccupancyDefault);
}

extern "C" struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                              enum cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}
