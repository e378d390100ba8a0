#include "client/cuda/driver_errors.hpp"

#include <atomic>

#include "client/core/runtime.hpp"
#include "client/core/unsupported.hpp"

namespace rgpu::client {
namespace {
std::atomic<bool> g_initialized{false};
}

CUresult to_cu(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorMissingConfiguration: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
    case cudaErrorCudartUnloading: return CUDA_ERROR_DEINITIALIZED;
    case cudaErrorInvalidSymbol: return CUDA_ERROR_NOT_FOUND;
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    default:
      // From 100 on, CUDA numbers each runtime error as its driver twin.
      return e >= 100 ? static_cast<CUresult>(e) : CUDA_ERROR_UNKNOWN;
  }
}

CUresult driver_unsupported(const char* name) { return to_cu(unsupported(name)); }

bool driver_initialized() { return g_initialized.load() || Runtime::get().initialized(); }

void set_driver_initialized() { g_initialized.store(true); }

}  // namespace rgpu::client
