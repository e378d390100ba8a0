// CUresult for the driver API: the runtime paths it shares report
// cudaError_t, translated here to the CUresult of the same meaning.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

namespace rgpu::client {

CUresult to_cu(cudaError_t e);
// What every driver function rgpu does not implement does: logs its name
// once and returns CUDA_ERROR_NOT_SUPPORTED.
CUresult driver_unsupported(const char* name);
// cuInit was called, or the runtime API already connected (it initialises
// the driver implicitly, as CUDA's does).
bool driver_initialized();
void set_driver_initialized();

}  // namespace rgpu::client
