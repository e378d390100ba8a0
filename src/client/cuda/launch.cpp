// cuLaunchKernel and function attributes. Launches go through the runtime's
// launch op: arguments packed at the offsets the server's driver reported
// (cuFuncGetParamInfo), or the caller's own buffer given through `extra`.
#include "client/cuda/cuda_api.hpp"

#include <cstring>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/cuda/driver_errors.hpp"
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

cudaError_t launch(const DriverFunction& f, dim3 grid, dim3 block, unsigned shared_mem, CUstream stream,
                   void** params, void** extra) {
  if (params && extra) return cudaErrorInvalidValue;
  Call call(proto::kOpLaunchKernel);
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
  return call.post();
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

extern "C" CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams, void** extra) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(f);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] {
    return launch(*fn, dim3(gridDimX, gridDimY, gridDimZ), dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                  hStream, kernelParams, extra);
  });
  return e == cudaErrorDeviceUninitialized ? CUDA_ERROR_INVALID_CONTEXT : to_cu(e);
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
