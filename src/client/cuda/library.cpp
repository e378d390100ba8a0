// Libraries (cuLibrary*) as modules that are not bound to a context: the
// image is loaded on the current device when the library is loaded, and on
// another device when one of its kernels or variables is first used there
// (NVIDIA loads it into each context lazily too). A CUlibrary is that
// module's handle and a CUkernel that function's, so cuLaunchKernel takes a
// CUkernel as CUDA allows.
#include "client/cuda/cuda_api.hpp"

#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/module_loading.hpp"
#include "common/log.hpp"

using namespace rgpu::client;

static_assert(static_cast<int>(CU_LIBRARY_BINARY_IS_PRESERVED) == static_cast<int>(cudaLibraryBinaryIsPreserved) &&
              static_cast<int>(CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) ==
                  static_cast<int>(cudaLibraryHostUniversalFunctionAndDataTable));

cudaError_t rgpu::client::check_library_options(const cudaLibraryOption* options, unsigned count, bool from_file) {
  if (count && !options) return cudaErrorInvalidValue;
  for (unsigned i = 0; i < count; ++i) {
    switch (options[i]) {
      case cudaLibraryBinaryIsPreserved:
        if (from_file) return cudaErrorInvalidValue;
        break;
      case cudaLibraryHostUniversalFunctionAndDataTable:
        // Its tables hold host addresses of the application for the GPU to use.
        RGPU_LOG(warn, "library option cudaLibraryHostUniversalFunctionAndDataTable is not supported by rgpu");
        return cudaErrorNotSupported;
      default:
        return cudaErrorInvalidValue;
    }
  }
  return cudaSuccess;
}

namespace {

// JIT options only tune or report on compilation, which the server does.
CUresult load(CUlibrary* library, const void* image, unsigned numJitOptions, CUjit_option* jitOptions,
              void** jitOptionsValues, CUlibraryOption* libraryOptions, unsigned numLibraryOptions,
              bool from_file) {
  KeepLastError keep;
  if (!library || !image) return CUDA_ERROR_INVALID_VALUE;
  if (numJitOptions && (!jitOptions || !jitOptionsValues)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = to_cu(check_library_options(reinterpret_cast<const cudaLibraryOption*>(libraryOptions),
                                               numLibraryOptions, from_file)))
    return e;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(api([&] { return load_library(reinterpret_cast<CUmodule*>(library), image); }));
}

}  // namespace

extern "C" CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                              void** jitOptionsValues, unsigned int numJitOptions,
                                              CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                              unsigned int numLibraryOptions) {
  return load(library, code, numJitOptions, jitOptions, jitOptionsValues, libraryOptions, numLibraryOptions, false);
}

extern "C" CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName,
                                                  CUjit_option* jitOptions, void** jitOptionsValues,
                                                  unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                                  void** libraryOptionValues, unsigned int numLibraryOptions) {
  if (!fileName) return CUDA_ERROR_INVALID_VALUE;
  std::vector<char> image;
  if (!read_image_file(fileName, &image)) return CUDA_ERROR_FILE_NOT_FOUND;
  return load(library, image.data(), numJitOptions, jitOptions, jitOptionsValues, libraryOptions, numLibraryOptions,
              true);
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

// The variable as the current context's device has it.
extern "C" CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                               const char* name) {
  KeepLastError keep;
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(reinterpret_cast<CUmodule>(library));
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  cudaError_t e = api([&] { return hand_out_global(dptr, bytes, m, name, Runtime::current_device()); });
  return e == cudaErrorInvalidSymbol ? CUDA_ERROR_NOT_FOUND : to_cu(e);
}

extern "C" CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library,
                                                const char* name) {
  KeepLastError keep;
  if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverModule* m = DriverHandles::get().find(reinterpret_cast<CUmodule>(library));
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  return to_cu(api([&] { return get_managed(dptr, bytes, m, name, Runtime::current_device()); }));
}

extern "C" CUresult CUDAAPI cuLibraryGetUnifiedFunction(void** fptr, CUlibrary library, const char* symbol) {
  KeepLastError keep;
  if (!fptr || !symbol) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(get_unified_function(DriverHandles::get().find(reinterpret_cast<CUmodule>(library)), symbol));
}

extern "C" CUresult CUDAAPI cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  if (!pLib) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  DriverFunction* f = DriverHandles::get().find(reinterpret_cast<CUfunction>(kernel));
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  *pLib = reinterpret_cast<CUlibrary>(f->module);
  return CUDA_SUCCESS;
}
