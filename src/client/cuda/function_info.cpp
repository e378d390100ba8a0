// What the client knows of a kernel without asking the server: its module,
// name and the parameter layout reported when it was looked up. Modules are
// loaded whole, so every kernel is loaded.
#include "client/cuda/cuda_api.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"

using namespace rgpu::client;

namespace {

CUresult find(CUfunction f, DriverFunction** out) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  *out = DriverHandles::get().find(f);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace

extern "C" CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
                                               size_t* paramSize) {
  DriverFunction* f;
  if (CUresult e = find(func, &f)) return e;
  if (paramIndex >= f->kernel.params.size()) return CUDA_ERROR_INVALID_VALUE;
  if (paramOffset) *paramOffset = f->kernel.params[paramIndex].offset;
  if (paramSize) *paramSize = f->kernel.params[paramIndex].size;
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
  DriverFunction* f;
  if (CUresult e = find(hfunc, &f)) return e;
  *name = f->name.c_str();
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
