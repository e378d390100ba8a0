// cuLaunchKernel and function attributes. Launches go through the runtime's
// launch op: arguments packed at the offsets the server's driver reported
// (cuFuncGetParamInfo), or the caller's own buffer given through `extra`.
#include "client/cuda/cuda_api.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/driver_launch.hpp"
#include "client/cuda/module_handles.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, p, CU_LAUNCH_PARAM_BUFFER_SIZE, &n, CU_LAUNCH_PARAM_END}
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

// A cooperative launch is answered: its errors (too large a grid) are its own.
cudaError_t launch(const DriverFunction& f, dim3 grid, dim3 block, unsigned shared_mem, CUstream stream,
                   void** params, void** extra, bool cooperative = false) {
  if (params && extra) return cudaErrorInvalidValue;
  Call call(cooperative ? proto::kOpLaunchCooperativeKernel : proto::kOpLaunchKernel);
  uint64_t s;
  if (cudaError_t e = call.to_stream(reinterpret_cast<cudaStream_t>(stream), &s)) return e;
  // A module lives in the context it was loaded in.
  if (call.device_index() != f.module->device) return cudaErrorDeviceUninitialized;
  const cudaDeviceProp* props;
  if (cudaError_t e = Runtime::get().properties(call.device_index(), &props)) return e;
  if (cudaError_t e = check_launch_config(*props, grid, block)) return e;
  if (shared_mem > static_cast<unsigned>(f.kernel.max_dynamic_shared)) return cudaErrorInvalidValue;
  std::vector<uint8_t> packed;
  if (cudaError_t e = extra ? pack_extra(f.kernel, extra, &packed) : pack_kernel_args(f.kernel, params, &packed))
    return e;
  call.args().put<uint64_t>(f.kernel.function).put(grid).put(block).put<uint32_t>(shared_mem).put<uint64_t>(s);
  call.args().put_bytes(packed.data(), packed.size());
  return cooperative ? call.run() : call.post();
}


int attribute(const cudaFuncAttributes& a, CUfunction_attribute attrib, bool* known) {
  *known = true;
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return a.maxThreadsPerBlock;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: return static_cast<int>(a.sharedSizeBytes);
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: return static_cast<int>(a.constSizeBytes);
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: return static_cast<int>(a.localSizeBytes);
    case CU_FUNC_ATTRIBUTE_NUM_REGS: return a.numRegs;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: return a.ptxVersion;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return a.binaryVersion;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: return a.cacheModeCA;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return a.maxDynamicSharedSizeBytes;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return a.preferredShmemCarveout;
    default: *known = false; return 0;
  }
}

// A per-function op of the runtime's, on the function's device.
template <typename Fill, typename Read>
CUresult function_call(CUfunction hfunc, uint16_t op, Fill&& fill, Read&& read) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(hfunc);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  return to_cu(api([&]() -> cudaError_t {
    Call call(op);
    int32_t remote;
    if (cudaError_t e = call.to_device(fn->module->device, &remote)) return e;
    call.args().put<uint64_t>(fn->kernel.function);
    fill(call.args());
    if (cudaError_t e = call.run()) return e;
    read(*fn, call.reply());
    return cudaSuccess;
  }));
}

}  // namespace

CUresult rgpu::client::launch_function(CUfunction f, dim3 grid, dim3 block, unsigned shared_mem, CUstream stream, void** params,
                   void** extra, bool cooperative) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(f);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] { return launch(*fn, grid, block, shared_mem, stream, params, extra, cooperative); });
  return e == cudaErrorDeviceUninitialized ? CUDA_ERROR_INVALID_CONTEXT : to_cu(e);
}

extern "C" CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams, void** extra) {
  return launch_function(f, dim3(gridDimX, gridDimY, gridDimZ), dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                   hStream, kernelParams, extra, false);
}

extern "C" CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                      unsigned int gridDimZ, unsigned int blockDimX,
                                                      unsigned int blockDimY, unsigned int blockDimZ,
                                                      unsigned int sharedMemBytes, CUstream hStream,
                                                      void** kernelParams) {
  return launch_function(f, dim3(gridDimX, gridDimY, gridDimZ), dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                   hStream, kernelParams, nullptr, true);
}

extern "C" CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  cudaFuncAttributes attrs{};
  CUresult r = function_call(
      hfunc, proto::kOpFuncGetAttributes, [](proto::Writer&) {},
      [&](DriverFunction&, proto::Reader& reply) { attrs = reply.get<cudaFuncAttributes>(); });
  if (r) return r;
  bool known;
  int value = attribute(attrs, attrib, &known);
  if (!known) return CUDA_ERROR_INVALID_VALUE;
  *pi = value;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                             void** extra) {
  if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  // Launch attributes (clusters, cooperative launch, priorities...) are not carried to the server yet.
  if (config->numAttrs) return CUDA_ERROR_NOT_SUPPORTED;
  return cuLaunchKernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                        config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, kernelParams,
                        extra);
}

// The attributes that can be set have the same numbers as cudaFuncAttribute's.
extern "C" CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return function_call(
      hfunc, proto::kOpFuncSetAttribute, [&](proto::Writer& w) { w.put<int32_t>(attrib).put<int32_t>(value); },
      [&](DriverFunction& f, proto::Reader&) {
        if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) f.kernel.max_dynamic_shared = value;
      });
}

extern "C" CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return function_call(
      hfunc, proto::kOpFuncSetCacheConfig, [&](proto::Writer& w) { w.put<int32_t>(config); },
      [](DriverFunction&, proto::Reader&) {});
}

extern "C" CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                                 int blockSize, size_t dynamicSMemSize,
                                                                                 unsigned int flags) {
  if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
  return function_call(
      func, proto::kOpOccupancyMaxActiveBlocks,
      [&](proto::Writer& w) { w.put<int32_t>(blockSize).put<uint64_t>(dynamicSMemSize).put<uint32_t>(flags); },
      [&](DriverFunction&, proto::Reader& r) { *numBlocks = r.get<int32_t>(); });
}

extern "C" CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                                        size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                              CU_OCCUPANCY_DEFAULT);
}

// The block size of highest occupancy, searched as the driver does: from the
// largest block the function and device allow down by warps, each size
// asking the server's occupancy calculator, with the dynamic shared memory
// the caller's function gives for that size.
extern "C" CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize,
                                                                     CUfunction func,
                                                                     CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                                     size_t dynamicSMemSize, int blockSizeLimit,
                                                                     unsigned int flags) {
  if (!minGridSize || !blockSize || blockSizeLimit < 0) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(func);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  CUdevice dev = fn->module->device;
  int max_threads_mp, warp, dev_max_block, sms, func_max_block;
  for (auto [out, attr] : {std::pair{&max_threads_mp, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
                           std::pair{&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
                           std::pair{&dev_max_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
                           std::pair{&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT}})
    if (CUresult e = cuDeviceGetAttribute(out, attr, dev)) return e;
  if (CUresult e = cuFuncGetAttribute(&func_max_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func)) return e;
  int limit = blockSizeLimit ? std::min(blockSizeLimit, dev_max_block) : dev_max_block;
  limit = std::min(limit, func_max_block);
  int best_blocks = 0, best_size = 0, best_occupancy = 0;
  for (int aligned = (limit + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
    int size = std::min(aligned, limit);
    size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
    int blocks = 0;
    if (CUresult e = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, func, size, smem, flags)) return e;
    if (blocks * size > best_occupancy) {
      best_occupancy = blocks * size;
      best_blocks = blocks;
      best_size = size;
    }
    if (best_occupancy == max_threads_mp) break;
  }
  *minGridSize = best_blocks * sms;
  *blockSize = best_size;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                             CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                             size_t dynamicSMemSize, int blockSizeLimit) {
  return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                   dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}
