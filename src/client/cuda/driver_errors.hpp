// CUresult for the driver API: the runtime paths it shares report
// cudaError_t, translated here to the CUresult of the same meaning.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"

namespace rgpu::client {

CUresult to_cu(cudaError_t e);
// What every driver function rgpu does not implement does: logs its name
// once and returns CUDA_ERROR_NOT_SUPPORTED.
CUresult driver_unsupported(const char* name);
// A generated stub refuses an argument beyond what rgpu carries (`why`):
// logs it and returns CUDA_ERROR_INVALID_VALUE.
CUresult driver_refused(const char* name, const char* why);
// A legacy export's 32-bit output cannot hold the value its newer version
// returned: logs the name once and returns CUDA_ERROR_NOT_SUPPORTED.
CUresult legacy_value_too_wide(const char* name);
// cuInit was called, or the runtime API already connected (it initialises
// the driver implicitly, as CUDA's does).
bool driver_initialized();
void set_driver_initialized();

inline CUresult driver_ready() { return driver_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

// A driver call done by the runtime's code: refused before cuInit, leaves
// the runtime's last error as it was, answers in CUresult.
template <typename F>
CUresult through_runtime(F&& f) {
  CallBoundary boundary;
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  return to_cu(f());
}

}  // namespace rgpu::client
