// Libraries (cuLibrary*), emulated as modules: the image is loaded on the
// current device when the library is loaded (NVIDIA loads it into each
// context lazily), a CUlibrary is that module's handle and a CUkernel that
// function's, so cuLaunchKernel takes a CUkernel as CUDA allows.
#include "client/cuda/cuda_api.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                              void** jitOptionsValues, unsigned int numJitOptions,
                                              CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                              unsigned int numLibraryOptions) {
  if (!library) return CUDA_ERROR_INVALID_VALUE;
  // Library options change how the image is kept, which the server decides.
  if (numLibraryOptions) return CUDA_ERROR_NOT_SUPPORTED;
  return cuModuleLoadDataEx(reinterpret_cast<CUmodule*>(library), code, numJitOptions, jitOptions, jitOptionsValues);
}

extern "C" CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName,
                                                  CUjit_option* jitOptions, void** jitOptionsValues,
                                                  unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                                  void** libraryOptionValues, unsigned int numLibraryOptions) {
  if (!library) return CUDA_ERROR_INVALID_VALUE;
  if (numLibraryOptions) return CUDA_ERROR_NOT_SUPPORTED;
  if (numJitOptions && (!jitOptions || !jitOptionsValues)) return CUDA_ERROR_INVALID_VALUE;
  return cuModuleLoad(reinterpret_cast<CUmodule*>(library), fileName);
}

extern "C" CUresult CUDAAPI cuLibraryUnload(CUlibrary library) {
  return cuModuleUnload(reinterpret_cast<CUmodule>(library));
}

extern "C" CUresult CUDAAPI cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  if (!pMod) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!DriverHandles::get().find(reinterpret_cast<CUmodule>(library))) return CUDA_ERROR_INVALID_HANDLE;
  *pMod = reinterpret_cast<CUmodule>(library);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return cuModuleGetFunction(reinterpret_cast<CUfunction*>(pKernel), reinterpret_cast<CUmodule>(library), name);
}

extern "C" CUresult CUDAAPI cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!DriverHandles::get().find(reinterpret_cast<CUfunction>(kernel))) return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = reinterpret_cast<CUfunction>(kernel);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  return cuModuleGetFunctionCount(count, reinterpret_cast<CUmodule>(lib));
}

extern "C" CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  return cuModuleEnumerateFunctions(reinterpret_cast<CUfunction*>(kernels), numKernels,
                                    reinterpret_cast<CUmodule>(lib));
}

extern "C" CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                               const char* name) {
  return cuModuleGetGlobal_v2(dptr, bytes, reinterpret_cast<CUmodule>(library), name);
}

extern "C" CUresult CUDAAPI cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  if (!pLib) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* f = DriverHandles::get().find(reinterpret_cast<CUfunction>(kernel));
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  *pLib = reinterpret_cast<CUlibrary>(f->module);
  return CUDA_SUCCESS;
}
