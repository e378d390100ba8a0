// Reductions: shared-memory tree + warp shuffles, and global atomics
// (atomicAdd on 64-bit ints, atomicMin/Max, atomicCAS loop). Integer math only
// so the result does not depend on the order atomics land in.
#include <algorithm>
#include <vector>

#include "corpus.h"

__global__ void block_sum(const int* in, long long* out, int n) {
  extern __shared__ long long sh[];  // dynamic shared memory: blockDim.x longs
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sh[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    long long v = sh[threadIdx.x];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) atomicAdd(reinterpret_cast<unsigned long long*>(out), (unsigned long long)v);
  }
}

__global__ void minmax(const int* in, int n, int* mn, int* mx, unsigned* xor_all) {
  // Accumulate privately first: one atomic of each kind per thread, not per
  // element (millions of CASes on one word would serialize for seconds).
  int lo = 1 << 30, hi = -(1 << 30);
  unsigned x = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    lo = min(lo, in[i]);
    hi = max(hi, in[i]);
    x ^= unsigned(in[i]);
  }
  atomicMin(mn, lo);
  atomicMax(mx, hi);
  // XOR via a CAS loop: exercises atomicCAS; XOR is order independent.
  unsigned old = *xor_all, assumed;
  do {
    assumed = old;
    old = atomicCAS(xor_all, assumed, assumed ^ x);
  } while (old != assumed);
}

int main() {
  const int n = 3'000'001;
  std::vector<int> h(n);
  uint32_t s = 7;
  long long ref = 0;
  int rmin = 1 << 30, rmax = -(1 << 30);
  unsigned rxor = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = int(lcg(s) % 2000001) - 1000000;
    ref += h[i];
    rmin = std::min(rmin, h[i]);
    rmax = std::max(rmax, h[i]);
    rxor ^= unsigned(h[i]);
  }
  int* d;
  long long* dsum;
  int *dmin, *dmax;
  unsigned* dxor;
  CK(cudaMalloc(&d, n * sizeof(int)));
  CK(cudaMalloc(&dsum, sizeof(long long)));
  CK(cudaMalloc(&dmin, sizeof(int)));
  CK(cudaMalloc(&dmax, sizeof(int)));
  CK(cudaMalloc(&dxor, sizeof(unsigned)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(dsum, 0, sizeof(long long)));
  int init_min = 1 << 30, init_max = -(1 << 30);
  CK(cudaMemcpy(dmin, &init_min, 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dmax, &init_max, 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dxor, 0, 4));
  int block = 512;
  block_sum<<<(n + block - 1) / block, block, block * sizeof(long long)>>>(d, dsum, n);
  CK(cudaGetLastError());
  minmax<<<264, 256>>>(d, n, dmin, dmax, dxor);
  CK(cudaGetLastError());
  long long sum;
  int mn, mx;
  unsigned x;
  CK(cudaMemcpy(&sum, dsum, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&mn, dmin, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&mx, dmax, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&x, dxor, 4, cudaMemcpyDeviceToHost));
  EXPECT(sum == ref, "sum %lld != %lld", sum, ref);
  EXPECT(mn == rmin && mx == rmax, "min/max %d %d", mn, mx);
  EXPECT(x == rxor, "xor %08x != %08x", x, rxor);
  printf("reduction n=%d sum=%lld min=%d max=%d xor=%08x\n", n, sum, mn, mx, x);
  CK(cudaFree(d));
  CK(cudaFree(dsum));
  CK(cudaFree(dmin));
  CK(cudaFree(dmax));
  CK(cudaFree(dxor));
  return finish();
}
