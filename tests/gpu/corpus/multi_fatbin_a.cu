// Part A of multi_fatbin: its own fat binary, a kernel named `step` in an
// anonymous namespace (part B has one with the same name and a different
// body), and its own __constant__.
#include "corpus.h"

namespace {
__constant__ int k_mul;
__global__ void step(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * k_mul;
}
}  // namespace

void part_a(int* d, int n, int mul) {
  CK(cudaMemcpyToSymbol(k_mul, &mul, sizeof mul));
  step<<<(n + 127) / 128, 128>>>(d, n);
  CK(cudaGetLastError());
}
