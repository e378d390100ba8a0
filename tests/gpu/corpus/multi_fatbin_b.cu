// Part B of multi_fatbin: see multi_fatbin_a.cu.
#include "corpus.h"

namespace {
__constant__ int k_add;  // a different symbol than A's, same idea
__global__ void step(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] + k_add + i;
}
}  // namespace

__device__ int b_calls = 0;
__global__ void b_count() { atomicAdd(&b_calls, 1); }

void part_b(int* d, int n, int add) {
  CK(cudaMemcpyToSymbol(k_add, &add, sizeof add));
  step<<<(n + 255) / 256, 256>>>(d, n);
  b_count<<<1, 1>>>();
  CK(cudaGetLastError());
}

int part_b_calls() {
  int c = 0;
  CK(cudaMemcpyFromSymbol(&c, b_calls, sizeof c));
  return c;
}
