// The runtime's libraries (cudaLibrary*), the driver's libraries under
// another name: a cudaLibrary_t is a CUlibrary (loaded on the current device,
// and on others at first use there) and a library's cudaKernel_t a CUkernel,
// which cudaLaunchKernel and cuLaunchKernel both launch.
#include <cuda_runtime_api.h>

#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/module_loading.hpp"

using namespace rgpu::client;

namespace {

cudaError_t find_library(cudaLibrary_t library, DriverModule** out) {
  *out = DriverHandles::get().find(reinterpret_cast<CUmodule>(library));
  return *out ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t load(cudaLibrary_t* library, const void* code, unsigned numJitOptions, cudaJitOption* jitOptions,
                 void** jitOptionsValues, cudaLibraryOption* libraryOptions, unsigned numLibraryOptions,
                 bool from_file) {
  if (!library || !code) return cudaErrorInvalidValue;
  if (numJitOptions && (!jitOptions || !jitOptionsValues)) return cudaErrorInvalidValue;
  if (cudaError_t e = check_library_options(libraryOptions, numLibraryOptions, from_file)) return e;
  // JIT options only tune or report on compilation, which the server does.
  return load_library(reinterpret_cast<CUmodule*>(library), code);
}

}  // namespace

extern "C" cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, cudaJitOption* jitOptions,
                                           void** jitOptionsValues, unsigned int numJitOptions,
                                           cudaLibraryOption* libraryOptions, void** libraryOptionValues,
                                           unsigned int numLibraryOptions) {
  return api([&] {
    return load(library, code, numJitOptions, jitOptions, jitOptionsValues, libraryOptions, numLibraryOptions, false);
  });
}

extern "C" cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t* library, const char* fileName,
                                               cudaJitOption* jitOptions, void** jitOptionsValues,
                                               unsigned int numJitOptions, cudaLibraryOption* libraryOptions,
                                               void** libraryOptionValues, unsigned int numLibraryOptions) {
  return api([&]() -> cudaError_t {
    if (!fileName) return cudaErrorInvalidValue;
    std::vector<char> image;
    if (!read_image_file(fileName, &image)) return cudaErrorFileNotFound;
    return load(library, image.data(), numJitOptions, jitOptions, jitOptionsValues, libraryOptions,
                numLibraryOptions, true);
  });
}

extern "C" cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  return api([&] {
    return DriverHandles::get().remove(reinterpret_cast<CUmodule>(library)) ? cudaSuccess
                                                                             : cudaErrorInvalidResourceHandle;
  });
}

extern "C" cudaError_t cudaLibraryGetKernel(cudaKernel_t* pKernel, cudaLibrary_t library, const char* name) {
  return api([&]() -> cudaError_t {
    if (!pKernel || !name) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(library, &m)) return e;
    cudaError_t e = get_function(reinterpret_cast<CUfunction*>(pKernel), m, name);
    return e == cudaErrorInvalidDeviceFunction ? cudaErrorSymbolNotFound : e;
  });
}

extern "C" cudaError_t cudaLibraryGetKernelCount(unsigned int* count, cudaLibrary_t lib) {
  return api([&]() -> cudaError_t {
    if (!count) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(lib, &m)) return e;
    std::vector<CUfunction> kernels;
    if (cudaError_t e = enumerate_functions(m, &kernels)) return e;
    *count = kernels.size();
    return cudaSuccess;
  });
}

// numKernels may be fewer than the library has.
extern "C" cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t* kernels, unsigned int numKernels,
                                                   cudaLibrary_t lib) {
  return api([&]() -> cudaError_t {
    if (!kernels && numKernels) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(lib, &m)) return e;
    std::vector<CUfunction> all;
    if (cudaError_t e = enumerate_functions(m, &all)) return e;
    for (size_t i = 0; i < numKernels && i < all.size(); ++i) kernels[i] = reinterpret_cast<cudaKernel_t>(all[i]);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaLibraryGetManaged(void** dptr, size_t* bytes, cudaLibrary_t library, const char* name) {
  return api([&]() -> cudaError_t {
    if (!name || (!dptr && !bytes)) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(library, &m)) return e;
    CUdeviceptr p = 0;
    if (cudaError_t e = get_managed(&p, bytes, m, name, Runtime::current_device())) return e;
    if (dptr) *dptr = reinterpret_cast<void*>(p);
    return cudaSuccess;
  });
}

// See module_loading.hpp for why no unified function is handed out.
extern "C" cudaError_t cudaLibraryGetUnifiedFunction(void** fptr, cudaLibrary_t library, const char* symbol) {
  return api([&]() -> cudaError_t {
    if (!fptr || !symbol) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(library, &m)) return e;
    return get_unified_function(m, symbol);
  });
}

extern "C" cudaError_t cudaLibraryGetGlobal(void** dptr, size_t* bytes, cudaLibrary_t library, const char* name) {
  return api([&]() -> cudaError_t {
    if (!name) return cudaErrorInvalidValue;
    DriverModule* m;
    if (cudaError_t e = find_library(library, &m)) return e;
    CUdeviceptr p = 0;
    if (cudaError_t e = hand_out_global(dptr ? &p : nullptr, bytes, m, name, Runtime::current_device()))
      return e == cudaErrorInvalidSymbol ? cudaErrorSymbolNotFound : e;
    if (dptr) *dptr = reinterpret_cast<void*>(p);
    return cudaSuccess;
  });
}
