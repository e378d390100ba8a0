// Device management on two remote GPUs (run with --gpus 0,1): properties,
// attributes, limits, cache and flags, versions, error reporting.
#include <cstring>

#include "check.h"

int main() {
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);
  for (int dev = 0; dev < count; ++dev) {
    OK(cudaSetDevice(dev));
    int cur = -1;
    OK(cudaGetDevice(&cur));
    CHECK(cur == dev);
    cudaDeviceProp prop;
    OK(cudaGetDeviceProperties(&prop, dev));
    CHECK(std::strlen(prop.name) > 0 && prop.totalGlobalMem > 0 && prop.warpSize == 32);
    int value = 0;
    OK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxThreadsPerBlock, dev));
    CHECK(value == prop.maxThreadsPerBlock);
    OK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, dev));
    CHECK(value == prop.multiProcessorCount);
    // Memory belongs to the device that allocated it.
    void* p = nullptr;
    OK(cudaMalloc(&p, 4096));
    cudaPointerAttributes attr;
    OK(cudaPointerGetAttributes(&attr, p));
    CHECK(attr.device == dev);
    int word = dev + 100, back = 0;
    OK(cudaMemcpy(p, &word, sizeof word, cudaMemcpyHostToDevice));
    OK(cudaSetDevice(0));
    OK(cudaMemcpy(&back, p, sizeof back, cudaMemcpyDefault));
    CHECK(back == dev + 100);
    OK(cudaFree(p));
  }
  OK(cudaSetDevice(0));
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaSetDevice(999));
  cudaDeviceProp missing;
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaGetDeviceProperties(&missing, 7));
  cudaGetLastError();

  size_t stack = 0;
  OK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  OK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  CHECK(stack == 4096);
  cudaFuncCache cfg;
  OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  OK(cudaDeviceGetCacheConfig(&cfg));
  CHECK(cfg == cudaFuncCachePreferShared);

  int runtime = 0, driver = 0;
  OK(cudaRuntimeGetVersion(&runtime));
  OK(cudaDriverGetVersion(&driver));
  CHECK(runtime == CUDART_VERSION && driver >= 13000);

  CHECK(std::strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0);
  CHECK(std::strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  CHECK(std::strlen(cudaGetErrorString(cudaErrorMemoryAllocation)) > 0);
  CHECK(cudaGetErrorString(cudaErrorInvalidValue) == cudaGetErrorString(cudaErrorInvalidValue));

  // Errors are remembered per thread until read.
  void* huge = nullptr;
  EXPECT_STATUS(cudaErrorMemoryAllocation, cudaMalloc(&huge, size_t{1} << 50));
  CHECK(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaSuccess);

  // A reset frees everything; the device is usable afterwards.
  void* p = nullptr;
  OK(cudaMalloc(&p, 1 << 20));
  OK(cudaDeviceReset());
  OK(cudaMalloc(&p, 1 << 20));
  OK(cudaMemset(p, 1, 1 << 20));
  OK(cudaDeviceSynchronize());
  OK(cudaFree(p));
  return finish();
}
