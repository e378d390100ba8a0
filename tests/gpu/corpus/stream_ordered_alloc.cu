// Stream-ordered allocation on real streams: each stream allocates, fills
// with a kernel, copies back and frees in stream order, many times over, from
// the default pool and from a pool of its own with a release threshold.
#include <cstdint>
#include <vector>

#include "corpus.h"

__global__ void fill(unsigned* d, int n, unsigned k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = i * 2654435761u + k;
}

int main() {
  const int streams = 3, rounds = 20, n = 1 << 18;
  cudaStream_t s[streams];
  unsigned* host[streams];
  for (int j = 0; j < streams; ++j) {
    CK(cudaStreamCreateWithFlags(&s[j], cudaStreamNonBlocking));
    CK(cudaMallocHost(&host[j], n * sizeof(unsigned)));
  }
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CK(cudaMemPoolCreate(&pool, &props));
  uint64_t threshold = 64ull << 20;
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  int bad = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < streams; ++j) {
      unsigned* d;
      if (j == 0)
        CK(cudaMallocAsync(&d, n * sizeof(unsigned), s[j]));
      else
        CK(cudaMallocFromPoolAsync(&d, n * sizeof(unsigned), pool, s[j]));
      fill<<<(n + 255) / 256, 256, 0, s[j]>>>(d, n, r * 7 + j);
      CK(cudaMemcpyAsync(host[j], d, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s[j]));
      CK(cudaFreeAsync(d, s[j]));
    }
    for (int j = 0; j < streams; ++j) {
      CK(cudaStreamSynchronize(s[j]));
      for (int i = 0; i < n; i += 997) bad += host[j][i] != i * 2654435761u + unsigned(r * 7 + j);
    }
  }
  EXPECT(bad == 0, "%d wrong values", bad);

  uint64_t used = 1, reserved = 0, back = 0;
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &back));
  EXPECT(used == 0, "pool still uses %llu bytes", (unsigned long long)used);
  printf("own pool: in use after freeing %llu, keeps memory %s, threshold %llu MB\n", (unsigned long long)used,
         reserved > 0 ? "yes" : "no", (unsigned long long)(back >> 20));
  CK(cudaMemPoolTrimTo(pool, 0));
  CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  printf("after trimming: keeps %llu bytes\n", (unsigned long long)reserved);

  cudaMemPool_t def, current;
  CK(cudaDeviceGetDefaultMemPool(&def, 0));
  CK(cudaDeviceSetMemPool(0, pool));
  CK(cudaDeviceGetMemPool(&current, 0));
  EXPECT(current == pool, "current pool not the one set");
  CK(cudaDeviceSetMemPool(0, def));
  CK(cudaMemPoolDestroy(pool));
  for (int j = 0; j < streams; ++j) {
    CK(cudaStreamDestroy(s[j]));
    CK(cudaFreeHost(host[j]));
  }
  printf("stream-ordered allocation: %d rounds on %d streams checked\n", rounds, streams);
  return finish();
}
