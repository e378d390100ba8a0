#include "client/cuda/driver_errors.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include "client/core/runtime.hpp"
#include "client/core/unsupported.hpp"
#include "common/log.hpp"

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
    // The profiler's errors have the same numbers in both APIs.
    case cudaErrorProfilerDisabled:
    case cudaErrorProfilerNotInitialized:
    case cudaErrorProfilerAlreadyStarted:
    case cudaErrorProfilerAlreadyStopped: return static_cast<CUresult>(e);
    default:
      // From 100 on, CUDA numbers each runtime error as its driver twin.
      return e >= 100 ? static_cast<CUresult>(e) : CUDA_ERROR_UNKNOWN;
  }
}

CUresult driver_unsupported(const char* name) { return to_cu(unsupported(name)); }

CUresult driver_refused(const char* name, const char* why) {
  RGPU_LOG(warn, "%s: %s is refused", name, why);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult legacy_value_too_wide(const char* name) {
  static std::mutex mutex;
  static auto* logged = new std::set<std::string>;  // never destroyed: exit handlers call in
  std::lock_guard lock(mutex);
  if (logged->insert(name).second)
    RGPU_LOG(warn, "%s: the value does not fit the legacy 32-bit parameter (its _v2 function returns it)", name);
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool driver_initialized() { return g_initialized.load() || Runtime::get().initialized(); }

void set_driver_initialized() { g_initialized.store(true); }

}  // namespace rgpu::client
