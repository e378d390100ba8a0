// What the client knows of a kernel without asking the server: its module,
// name and the parameter layout reported when it was looked up (name and
// layout of the runtime's kernel handles too). Modules are loaded whole, so
// every kernel is loaded.
#include "client/cuda/cuda_api.hpp"
#include "client/core/api_guard.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "client/cuda/module_handles.hpp"

using namespace rgpu::client;

namespace {

CUresult find(CUfunction f, DriverFunction** out) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  *out = DriverHandles::get().find(f);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace

// A runtime kernel handle (cudaGetFuncBySymbol's cudaFunction_t) is asked
// about as loaded on the current device.
extern "C" CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
                                               size_t* paramSize) {
  KeepLastError keep;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!known_kernel(func)) return CUDA_ERROR_INVALID_HANDLE;
  const LoadedKernel* k;
  if (CUresult e = to_cu(api([&] { return resolve_kernel(func, home_device(func), &k); }))) return e;
  if (paramIndex >= k->params.size()) return CUDA_ERROR_INVALID_VALUE;
  if (paramOffset) *paramOffset = k->params[paramIndex].offset;
  if (paramSize) *paramSize = k->params[paramIndex].size;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset,
                                                 size_t* paramSize) {
  return cuFuncGetParamInfo(reinterpret_cast<CUfunction>(kernel), paramIndex, paramOffset, paramSize);
}

extern "C" CUresult CUDAAPI cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  if (!hmod) return CUDA_ERROR_INVALID_VALUE;
  DriverFunction* f;
  if (CUresult e = find(hfunc, &f)) return e;
  *hmod = reinterpret_cast<CUmodule>(f->module);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  const char* n = kernel_name(hfunc);
  if (!n) return CUDA_ERROR_INVALID_HANDLE;
  *name = n;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuKernelGetName(const char** name, CUkernel hfunc) {
  return cuFuncGetName(name, reinterpret_cast<CUfunction>(hfunc));
}

extern "C" CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  if (!state) return CUDA_ERROR_INVALID_VALUE;
  DriverFunction* f;
  if (CUresult e = find(function, &f)) return e;
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuFuncLoad(CUfunction function) {
  DriverFunction* f;
  return find(function, &f);
}
