// A shared GPU's memory amount (issue 11): the job's credential gives it
// POOL_AMOUNT bytes on GPU 0. cudaMemGetInfo/cuMemGetInfo report the amount
// as the total; every allocation path past it fails with the API's
// out-of-memory error (runtime and driver), and memory freed is usable again.
#include <cstdlib>

#include "driver_check.h"

int main() {
  const char* env = std::getenv("POOL_AMOUNT");
  if (!env) {
    std::printf("RESULT FAIL: POOL_AMOUNT not set\n");
    return 1;
  }
  const size_t amount = std::strtoull(env, nullptr, 10);
  size_t free = 0, total = 0;
  OK(cudaMemGetInfo(&free, &total));
  if (g_failures) {  // no session (a refused credential): nothing below can run
    std::printf("RESULT FAIL\n");
    return 1;
  }
  CHECK(total == amount);
  CHECK(free == amount);

  void* half = nullptr;
  OK(cudaMalloc(&half, amount / 2));
  OK(cudaMemGetInfo(&free, &total));
  CHECK(total == amount);
  CHECK(free == amount - amount / 2);
  std::printf("holding %zu MiB: cudaMemGetInfo says total %zu MiB, free %zu MiB\n", (amount / 2) >> 20,
              total >> 20, free >> 20);

  // Past the amount, on each path: nothing is allocated, the error is the API's.
  void* p = nullptr;
  cudaError_t past = cudaMalloc(&p, amount / 2 + 4096);
  std::printf("cudaMalloc of %zu MiB + 4 KiB more: %s\n", (amount / 2) >> 20, cudaGetErrorName(past));
  CHECK(past == cudaErrorMemoryAllocation);
  cudaGetLastError();
  size_t pitch = 0;
  EXPECT_STATUS(cudaErrorMemoryAllocation, cudaMallocPitch(&p, &pitch, 1 << 20, amount / (1 << 20)));
  cudaGetLastError();
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  EXPECT_STATUS(cudaErrorMemoryAllocation, cudaMallocAsync(&p, amount, stream));
  cudaGetLastError();
  cudaArray_t array = nullptr;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  EXPECT_STATUS(cudaErrorMemoryAllocation, cudaMallocArray(&array, &desc, 8192, amount / 8192 / 4 + 1));
  cudaGetLastError();
  CUdeviceptr d = 0;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&d, amount / 2 + 4096));
  size_t dfree = 0, dtotal = 0;
  CU_OK(cuMemGetInfo(&dfree, &dtotal));
  CHECK(dtotal == amount);
  CHECK(dfree == amount - amount / 2);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granularity = 0;
  CU_OK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle handle;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemCreate(&handle, (amount / granularity + 1) * granularity, &prop, 0));

  // Within what is left, each path works, and what it holds counts.
  OK(cudaMallocAsync(&p, amount / 8, stream));
  OK(cudaStreamSynchronize(stream));
  OK(cudaMemGetInfo(&free, &total));
  CHECK(free == amount - amount / 2 - amount / 8);
  OK(cudaFreeAsync(p, stream));
  OK(cudaStreamSynchronize(stream));
  CU_OK(cuMemAlloc(&d, amount / 8));
  CU_OK(cuMemFree(d));
  OK(cudaMallocArray(&array, &desc, 1024, 16));
  OK(cudaFreeArray(array));

  // Freed memory is the job's again: the whole amount is there.
  OK(cudaFree(half));
  OK(cudaMemGetInfo(&free, &total));
  CHECK(free == amount);
  OK(cudaMalloc(&p, amount));
  OK(cudaFree(p));
  OK(cudaStreamDestroy(stream));
  std::printf("RESULT %s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
