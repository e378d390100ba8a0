// A failing device assert: the kernel stops, the application sees
// cudaErrorAssert at the next synchronisation and from then on, as locally.
#include <cassert>

#include "corpus.h"

__global__ void check_positive(const int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(v[i] > 0);
}

int main() {
  const int n = 256;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = i == 77 ? -1 : i + 1;
  int* d;
  CK(cudaMalloc(&d, sizeof h));
  CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  check_positive<<<1, n>>>(d, n);
  cudaError_t launch = cudaGetLastError();
  cudaError_t sync = cudaDeviceSynchronize();
  cudaError_t after = cudaMalloc(&d, 16);
  printf("launch: %s\nsync: %s\nnext call: %s\n", cudaGetErrorName(launch), cudaGetErrorName(sync),
         cudaGetErrorName(after));
  EXPECT(launch == cudaSuccess, "launch failed");
  EXPECT(sync == cudaErrorAssert, "sync returned %s", cudaGetErrorName(sync));
  EXPECT(after == cudaErrorAssert, "the error is not sticky");
  return finish();
}
