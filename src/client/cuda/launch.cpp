// cuLaunchKernel(Ex) and function attributes. Launches go through the
// runtime's launch path (kernel_launcher.hpp): arguments packed at the
// offsets the server's driver reported (cuFuncGetParamInfo), or the caller's
// own buffer given through `extra`.
#include "client/cuda/cuda_api.hpp"

#include <algorithm>

#include "client/core/api_guard.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/kernel_attributes.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "client/cuda/module_handles.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// Either kernel handle (a CUfunction, or a cudaKernel_t of the runtime's);
// a module's kernel launched from another context is the driver's invalid
// context.
CUresult launch(CUfunction f, const KernelLaunch& l) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!known_kernel(f)) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] { return launch_kernel(f, l); });
  return e == cudaErrorDeviceUninitialized ? CUDA_ERROR_INVALID_CONTEXT : to_cu(e);
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
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: return a.clusterDimMustBeSet;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: return a.requiredClusterWidth;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: return a.requiredClusterHeight;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: return a.requiredClusterDepth;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: return a.nonPortableClusterSizeAllowed;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: return a.clusterSchedulingPolicyPreference;
    default: *known = false; return 0;
  }
}

// CUlaunchAttribute is cudaLaunchAttribute: same ids, same value layout.
static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute));

KernelLaunch from_config(const CUlaunchConfig& c) {
  return {.grid = dim3(c.gridDimX, c.gridDimY, c.gridDimZ),
          .block = dim3(c.blockDimX, c.blockDimY, c.blockDimZ),
          .shared_mem = c.sharedMemBytes,
          .stream = reinterpret_cast<cudaStream_t>(c.hStream),
          .attributes = {reinterpret_cast<const cudaLaunchAttribute*>(c.attrs), c.numAttrs}};
}

// The device a per-kernel call goes to when the API names none.
constexpr int kHomeDevice = -1;

// A per-kernel call on `device` or the kernel's home_device.
template <typename Body>
CUresult on_kernel(const void* kernel, int device, Body&& body) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!known_kernel(kernel)) return CUDA_ERROR_INVALID_HANDLE;
  if (device == kHomeDevice) device = home_device(kernel);
  cudaError_t e = api([&] { return body(device); });
  // A module's kernel exists in its own context only.
  return e == cudaErrorDeviceUninitialized ? CUDA_ERROR_INVALID_DEVICE : to_cu(e);
}

CUresult get_attribute(int* pi, CUfunction_attribute attrib, const void* kernel, int device) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  cudaFuncAttributes attrs{};
  if (CUresult r = on_kernel(kernel, device, [&](int on) { return kernel_attributes(kernel, on, &attrs); }))
    return r;
  bool known;
  int value = attribute(attrs, attrib, &known);
  if (!known) return CUDA_ERROR_INVALID_VALUE;
  *pi = value;
  return CUDA_SUCCESS;
}

// The attributes that can be set have the same numbers as cudaFuncAttribute's.
CUresult set_attribute(const void* kernel, int device, CUfunction_attribute attrib, int value) {
  return on_kernel(kernel, device, [&](int on) { return set_kernel_attribute(kernel, on, attrib, value); });
}

CUresult set_cache_config(const void* kernel, int device, CUfunc_cache config) {
  return on_kernel(kernel, device, [&](int on) { return set_kernel_cache_config(kernel, on, config); });
}

}  // namespace

extern "C" CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams, void** extra) {
  KernelLaunch l{.grid = dim3(gridDimX, gridDimY, gridDimZ),
                 .block = dim3(blockDimX, blockDimY, blockDimZ),
                 .shared_mem = sharedMemBytes,
                 .stream = reinterpret_cast<cudaStream_t>(hStream),
                 .params = kernelParams,
                 .extra = extra};
  return launch(f, l);
}

// Answered, as cudaLaunchCooperativeKernel: whether the grid fits on the
// device at once is the launch's own error.
extern "C" CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                      unsigned int gridDimZ, unsigned int blockDimX,
                                                      unsigned int blockDimY, unsigned int blockDimZ,
                                                      unsigned int sharedMemBytes, CUstream hStream,
                                                      void** kernelParams) {
  KernelLaunch l{.grid = dim3(gridDimX, gridDimY, gridDimZ),
                 .block = dim3(blockDimX, blockDimY, blockDimZ),
                 .shared_mem = sharedMemBytes,
                 .stream = reinterpret_cast<cudaStream_t>(hStream),
                 .params = kernelParams,
                 .cooperative = true};
  return launch(f, l);
}

extern "C" CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return get_attribute(pi, attrib, hfunc, kHomeDevice);
}

extern "C" CUresult CUDAAPI cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  return get_attribute(pi, attrib, kernel, dev);
}

extern "C" CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                             void** extra) {
  if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  KernelLaunch l = from_config(*config);
  l.params = kernelParams;
  l.extra = extra;
  return launch(f, l);
}

extern "C" CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return set_attribute(hfunc, kHomeDevice, attrib, value);
}

extern "C" CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  return set_attribute(kernel, dev, attrib, val);
}

extern "C" CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return set_cache_config(hfunc, kHomeDevice, config);
}

extern "C" CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  return set_cache_config(kernel, dev, config);
}

extern "C" CUresult CUDAAPI cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
  return on_kernel(hfunc, kHomeDevice, [&](int on) { return set_kernel_shared_mem_config(hfunc, on, config); });
}

extern "C" CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                                                 int blockSize, size_t dynamicSMemSize,
                                                                                 unsigned int flags) {
  if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
  return on_kernel(func, kHomeDevice, [&](int on) {
    return kernel_occupancy(func, on, {blockSize, dynamicSMemSize, flags}, numBlocks);
  });
}

extern "C" CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                                        size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                              CU_OCCUPANCY_DEFAULT);
}

extern "C" CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func,
                                                                   int numBlocks, int blockSize) {
  if (!dynamicSmemSize) return CUDA_ERROR_INVALID_VALUE;
  return on_kernel(func, kHomeDevice, [&](int on) {
    return kernel_available_dynamic_smem(func, on, numBlocks, blockSize, dynamicSmemSize);
  });
}

namespace {

// A thread block cluster query over a whole launch configuration.
CUresult cluster_query(uint16_t op, int* out, CUfunction func, const CUlaunchConfig* config) {
  if (!out || !config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!known_kernel(func)) return CUDA_ERROR_INVALID_HANDLE;
  KernelLaunch l = from_config(*config);
  cudaError_t e = api([&] { return cluster_occupancy(op, func, l, out); });
  return e == cudaErrorDeviceUninitialized ? CUDA_ERROR_INVALID_CONTEXT : to_cu(e);
}

}  // namespace

extern "C" CUresult CUDAAPI cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func,
                                                        const CUlaunchConfig* config) {
  return cluster_query(proto::kOpOccupancyMaxActiveClusters, numClusters, func, config);
}

extern "C" CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func,
                                                              const CUlaunchConfig* config) {
  return cluster_query(proto::kOpOccupancyMaxPotentialClusterSize, clusterSize, func, config);
}

// As cuda_runtime.h's cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags:
// the block size (a multiple of the warp size, within the limits) with the
// most resident threads per multiprocessor, asking the server's driver for
// each candidate's occupancy.
extern "C" CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize,
                                                                      CUfunction func,
                                                                      CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                                      size_t dynamicSMemSize, int blockSizeLimit,
                                                                      unsigned int flags) {
  if (!minGridSize || !blockSize || blockSizeLimit < 0) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!known_kernel(func)) return CUDA_ERROR_INVALID_HANDLE;
  const cudaDeviceProp* props;
  if (CUresult e = to_cu(api([&] { return Runtime::get().properties(home_device(func), &props); }))) return e;
  int func_max_threads = 0;
  if (CUresult e = cuFuncGetAttribute(&func_max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func)) return e;
  const int granularity = props->warpSize;
  int limit = blockSizeLimit ? blockSizeLimit : props->maxThreadsPerBlock;
  limit = std::min({limit, props->maxThreadsPerBlock, func_max_threads});
  int best_size = 0, best_blocks = 0, best_threads = 0;
  for (int aligned = (limit + granularity - 1) / granularity * granularity; aligned > 0; aligned -= granularity) {
    int size = std::min(limit, aligned);
    size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
    int blocks = 0;
    if (CUresult e = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, func, size, smem, flags)) return e;
    if (blocks * size > best_threads) {
      best_size = size;
      best_blocks = blocks;
      best_threads = blocks * size;
    }
    if (best_threads == props->maxThreadsPerMultiProcessor) break;
  }
  *minGridSize = best_blocks * props->multiProcessorCount;
  *blockSize = best_size;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                             CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                             size_t dynamicSMemSize, int blockSizeLimit) {
  return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                   dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}
