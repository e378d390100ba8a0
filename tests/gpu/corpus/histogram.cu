// Histogram with per-block shared-memory atomics merged into global counts,
// on two streams over the two halves of the input.
#include <vector>

#include "corpus.h"

constexpr int BINS = 256;

__global__ void hist(const unsigned char* in, size_t n, unsigned* bins) {
  __shared__ unsigned local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    atomicAdd(&local[in[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main() {
  const size_t n = 24u << 20;
  std::vector<unsigned char> h(n);
  uint32_t s = 2024;
  for (auto& c : h) {
    uint32_t a = lcg(s) >> 24, b = lcg(s) >> 16;  // two draws, in a defined order
    c = (unsigned char)(a & b);                   // AND of two: skewed toward 0
  }
  unsigned ref[BINS] = {};
  for (auto c : h) ++ref[c];
  unsigned char* d;
  unsigned* dbins;
  CK(cudaMalloc(&d, n));
  CK(cudaMalloc(&dbins, BINS * 4));
  CK(cudaMemset(dbins, 0, BINS * 4));
  cudaStream_t st[2];
  for (auto& x : st) CK(cudaStreamCreate(&x));
  for (int k = 0; k < 2; ++k) {
    size_t off = k * (n / 2);
    CK(cudaMemcpyAsync(d + off, h.data() + off, n / 2, cudaMemcpyHostToDevice, st[k]));
    hist<<<132, 512, 0, st[k]>>>(d + off, n / 2, dbins);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned bins[BINS];
  CK(cudaMemcpy(bins, dbins, sizeof bins, cudaMemcpyDeviceToHost));
  int bad = 0;
  unsigned long long total = 0;
  for (int b = 0; b < BINS; ++b) {
    bad += bins[b] != ref[b];
    total += bins[b];
  }
  EXPECT(bad == 0 && total == n, "%d bins wrong", bad);
  printf("histogram n=%zu total=%llu bin0=%u bin255=%u checksum=%016llx\n", n, total, bins[0], bins[255],
         (unsigned long long)fnv1a(bins, sizeof bins));
  for (auto& x : st) CK(cudaStreamDestroy(x));
  CK(cudaFree(d));
  CK(cudaFree(dbins));
  return finish();
}
