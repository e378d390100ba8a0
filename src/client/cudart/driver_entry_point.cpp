// cudaGetDriverEntryPoint: the driver API is in this very library (rgpu's
// libcuda.so.1 is the same file), so the runtime asks its cuGetProcAddress.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"

using namespace rgpu::client;

// cudaEnable* flags and cudaDriverEntryPointQueryResult values are the
// driver's CU_GET_PROC_ADDRESS_* ones.
extern "C" cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                                        unsigned long long flags,
                                                        cudaDriverEntryPointQueryResult* driverStatus) {
  return api([&]() -> cudaError_t {
    if (!symbol || !funcPtr) return cudaErrorInvalidValue;
    CUdriverProcAddressQueryResult status;
    CUresult r = cuGetProcAddress(symbol, funcPtr, static_cast<int>(cudaVersion), flags, &status);
    if (driverStatus) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
    // A missing symbol is an answer, given through driverStatus and a null funcPtr.
    return r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_FOUND ? cudaSuccess : cudaErrorInvalidValue;
  });
}

extern "C" cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                               cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}
