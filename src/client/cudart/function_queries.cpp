// What the runtime tells of a kernel beyond its attributes: its name and
// parameter layout (known to the client since the kernel was loaded), its
// cudaFunction_t, and the occupancy questions about clusters and shared
// memory the server's driver answers.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/cuda/kernel_attributes.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// The kernel as loaded where the API looks for it: a registered kernel on
// the current device, a library's on its own.
cudaError_t loaded(const void* func, const LoadedKernel** out) {
  if (!known_kernel(func)) return cudaErrorInvalidDeviceFunction;
  return resolve_kernel(func, home_device(func), out);
}

cudaError_t cluster_query(uint16_t op, int* out, const void* func, const cudaLaunchConfig_t* config) {
  if (!out || !config || (config->numAttrs && !config->attrs)) return cudaErrorInvalidValue;
  if (!known_kernel(func)) return cudaErrorInvalidDeviceFunction;
  KernelLaunch l{.grid = config->gridDim,
                 .block = config->blockDim,
                 .shared_mem = config->dynamicSmemBytes,
                 .stream = config->stream,
                 .attributes = {config->attrs, config->numAttrs}};
  return cluster_occupancy(op, func, l, out);
}

}  // namespace

extern "C" cudaError_t cudaFuncGetName(const char** name, const void* func) {
  return api([&]() -> cudaError_t {
    if (!name) return cudaErrorInvalidValue;
    const char* n = kernel_name(func);
    if (!n) return cudaErrorInvalidDeviceFunction;
    *name = n;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaFuncGetParamInfo(const void* func, size_t paramIndex, size_t* paramOffset,
                                            size_t* paramSize) {
  return api([&]() -> cudaError_t {
    const LoadedKernel* lk;
    if (cudaError_t e = loaded(func, &lk)) return e;
    if (paramIndex >= lk->params.size()) return cudaErrorInvalidValue;
    if (paramOffset) *paramOffset = lk->params[paramIndex].offset;
    if (paramSize) *paramSize = lk->params[paramIndex].size;
    return cudaSuccess;
  });
}

// A cudaFunction_t is the kernel's registry handle, which cuLaunchKernel and
// the driver's function calls accept like a CUfunction.
extern "C" cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  return api([&]() -> cudaError_t {
    if (!functionPtr) return cudaErrorInvalidValue;
    cudaKernel_t k;
    if (cudaError_t e = cudaGetKernel(&k, symbolPtr)) return e;
    *functionPtr = reinterpret_cast<cudaFunction_t>(k);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* func,
                                                                 int numBlocks, int blockSize) {
  return api([&]() -> cudaError_t {
    if (!dynamicSmemSize) return cudaErrorInvalidValue;
    return kernel_available_dynamic_smem(func, home_device(func), numBlocks, blockSize, dynamicSmemSize);
  });
}

extern "C" cudaError_t cudaOccupancyMaxActiveClusters(int* numClusters, const void* func,
                                                      const cudaLaunchConfig_t* launchConfig) {
  return api([&] { return cluster_query(proto::kOpOccupancyMaxActiveClusters, numClusters, func, launchConfig); });
}

extern "C" cudaError_t cudaOccupancyMaxPotentialClusterSize(int* clusterSize, const void* func,
                                                            const cudaLaunchConfig_t* launchConfig) {
  return api(
      [&] { return cluster_query(proto::kOpOccupancyMaxPotentialClusterSize, clusterSize, func, launchConfig); });
}
