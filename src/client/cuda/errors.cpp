// cuGetErrorName / cuGetErrorString, from the CUresult table of cuda.h.
#include "client/cuda/cuda_api.hpp"

#include "client/cuda/driver_error_names.hpp"

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const DriverErrorName* n = driver_error_name(error);
  *pStr = n ? n->name : nullptr;
  return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

extern "C" CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const DriverErrorName* n = driver_error_name(error);
  *pStr = n ? n->description : nullptr;
  return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
