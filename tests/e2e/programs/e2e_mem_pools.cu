// Stream-ordered allocation and memory pools: allocations usable in stream
// order and by later synchronous calls, pools with attributes, the device's
// current pool, and errors for what is not the application's.
#include <cstdint>
#include <vector>

#include "check.h"

int main() {
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  const size_t n = 1 << 20;

  unsigned char* a = nullptr;
  OK(cudaMallocAsync(&a, n, s));
  CHECK(a != nullptr);
  OK(cudaMemsetAsync(a, 0x3c, n, s));
  std::vector<unsigned char> h(n);
  OK(cudaMemcpyAsync(h.data(), a, n, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  CHECK(h[0] == 0x3c && h[n - 1] == 0x3c);
  cudaPointerAttributes attr;
  OK(cudaPointerGetAttributes(&attr, a + 10));
  CHECK(attr.type == cudaMemoryTypeDevice);

  cudaMemPool_t def, again;
  OK(cudaDeviceGetDefaultMemPool(&def, 0));
  OK(cudaDeviceGetDefaultMemPool(&again, 0));
  CHECK(def == again);
  uint64_t used = 0, threshold = UINT64_MAX, back = 0;
  OK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &used));
  CHECK(used >= n);
  OK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
  OK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &back));
  CHECK(back == UINT64_MAX);
  int reuse = 0;
  OK(cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &reuse));
  int reuse_back = 1;
  OK(cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &reuse_back));
  CHECK(reuse_back == 0);

  OK(cudaFreeAsync(a, s));
  OK(cudaStreamSynchronize(s));
  // Freed memory is no longer the application's.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpy(h.data(), a, 16, cudaMemcpyDeviceToHost));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFreeAsync(a, s));
  OK(cudaFreeAsync(nullptr, s));

  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  OK(cudaMemPoolCreate(&pool, &props));
  unsigned char* b = nullptr;
  OK(cudaMallocFromPoolAsync(&b, 4096, pool, s));
  OK(cudaMemcpyAsync(b, h.data(), 4096, cudaMemcpyHostToDevice, s));
  OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CHECK(used >= 4096);

  // The device's current pool serves cudaMallocAsync.
  OK(cudaDeviceSetMemPool(0, pool));
  cudaMemPool_t current;
  OK(cudaDeviceGetMemPool(&current, 0));
  CHECK(current == pool);
  unsigned char* c = nullptr;
  OK(cudaMallocAsync(&c, 8192, s));
  uint64_t used_after = 0;
  OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used_after));
  CHECK(used_after >= used + 8192);
  OK(cudaFreeAsync(b, s));
  OK(cudaFreeAsync(c, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaMemPoolTrimTo(pool, 0));
  OK(cudaDeviceSetMemPool(0, def));
  OK(cudaMemPoolDestroy(pool));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPoolDestroy(pool));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMallocFromPoolAsync(&c, 16, pool, s));

  OK(cudaStreamDestroy(s));
  return finish();
}
