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
  if (!buffer || !size || *size < k.args_size) return cudaErrorInvalidValue;
  packed->assign(static_cast<const uint8_t*>(buffer), static_cast<const uint8_t*>(buffer) + k.args_size);
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
  KeepLastError keep;
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* fn = DriverHandles::get().find(hfunc);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  cudaFuncAttributes attrs{};
  CUresult r = to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpFuncGetAttributes);
    int32_t remote;
    if (cudaError_t e = call.to_device(fn->module->device, &remote)) return e;
    call.args().put<uint64_t>(fn->kernel.function);
    if (cudaError_t e = call.quiet().run()) return e;
    attrs = call.reply().get<cudaFuncAttributes>();
    return cudaSuccess;
  }));
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
