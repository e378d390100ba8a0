// Kernel launches and per-kernel queries. Arguments are packed at the offsets
// the server's driver reported for the kernel and sent without a round trip.
#include <cuda_runtime_api.h>

#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/core/module_registry.hpp"
#include "client/core/per_thread_stream.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfiguration> t_configs;

// A cooperative launch is answered: whether the grid fits on the device at
// once is the launch's own error, as locally.
cudaError_t launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                   cudaStream_t stream, bool cooperative = false) {
  KernelEntry* k = ModuleRegistry::get().find_kernel(func);
  if (!k) return cudaErrorInvalidDeviceFunction;
  Call call(cooperative ? proto::kOpLaunchCooperativeKernel : proto::kOpLaunchKernel);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  const cudaDeviceProp* props;
  if (cudaError_t e = Runtime::get().properties(call.device_index(), &props)) return e;
  // Checked here, as the local runtime checks it, so that the error is the
  // launch's own and not a later call's.
  if (cudaError_t e = check_launch_config(*props, grid, block)) return e;
  const LoadedKernel* lk;
  if (cudaError_t e = ModuleRegistry::get().kernel_on(k, call.device_index(), &lk)) return e;
  if (shared_mem > static_cast<size_t>(lk->max_dynamic_shared)) return cudaErrorInvalidValue;
  std::vector<uint8_t> packed;
  if (cudaError_t e = pack_kernel_args(*lk, args, &packed)) return e;
  call.args().put<uint64_t>(lk->function).put(grid).put(block).put<uint32_t>(shared_mem).put<uint64_t>(s);
  call.args().put_bytes(packed.data(), packed.size());
  return cooperative ? call.run() : call.post();
}

cudaError_t loaded_on_current(const void* func, const LoadedKernel** out, Call& call) {
  KernelEntry* k = ModuleRegistry::get().find_kernel(func);
  if (!k) return cudaErrorInvalidDeviceFunction;
  if (cudaError_t e = call.to_current_device()) return e;
  return ModuleRegistry::get().kernel_on(k, call.device_index(), out);
}

}  // namespace

extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                struct CUstream_st* stream) {
  t_configs.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

extern "C" cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                  void* stream) {
  if (t_configs.empty()) return cudaErrorMissingConfiguration;
  CallConfiguration c = t_configs.back();
  t_configs.pop_back();
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

extern "C" cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                   size_t sharedMem, cudaStream_t stream) {
  return api([&] { return launch(func, gridDim, blockDim, args, sharedMem, stream, true); });
}

extern "C" cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  return api([&]() -> cudaError_t {
    if (!attr) return cudaErrorInvalidValue;
    Call call(proto::kOpFuncGetAttributes);
    const LoadedKernel* lk;
    if (cudaError_t e = loaded_on_current(func, &lk, call)) return e;
    call.args().put<uint64_t>(lk->function);
    if (cudaError_t e = call.run()) return e;
    *attr = call.reply().get<cudaFuncAttributes>();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpFuncSetAttribute);
    const LoadedKernel* lk;
    if (cudaError_t e = loaded_on_current(func, &lk, call)) return e;
    call.args().put<uint64_t>(lk->function).put<int32_t>(attr).put<int32_t>(value);
    cudaError_t e = call.run();
    if (e == cudaSuccess && attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
      ModuleRegistry::get().set_max_dynamic_shared(ModuleRegistry::get().find_kernel(func), call.device_index(), value);
    return e;
  });
}

extern "C" cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpFuncSetCacheConfig);
    const LoadedKernel* lk;
    if (cudaError_t e = loaded_on_current(func, &lk, call)) return e;
    call.args().put<uint64_t>(lk->function).put<int32_t>(cacheConfig);
    return call.run();
  });
}

extern "C" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                              int blockSize,
                                                                              size_t dynamicSMemSize,
                                                                              unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!numBlocks) return cudaErrorInvalidValue;
    Call call(proto::kOpOccupancyMaxActiveBlocks);
    const LoadedKernel* lk;
    if (cudaError_t e = loaded_on_current(func, &lk, call)) return e;
    call.args().put<uint64_t>(lk->function).put<int32_t>(blockSize).put<uint64_t>(dynamicSMemSize);
    call.args().put<uint32_t>(flags);
    if (cudaError_t e = call.run()) return e;
    *numBlocks = call.reply().get<int32_t>();
    return cudaSuccess;
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
