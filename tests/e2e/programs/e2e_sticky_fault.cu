// A session whose own work faults: a graph copies into memory freed under
// it. The server's host-test backend answers an illegal address, a sticky
// fault (on a GPU the copy's fault is one too). Prints FAULTED and the
// error, then exits 0; anything else fails.
#include <cstdio>

#include "check.h"

int main() {
  const size_t n = 4096;
  void *src = nullptr, *dst = nullptr;
  OK(cudaMalloc(&src, n));
  OK(cudaMalloc(&dst, n));
  cudaGraph_t g;
  cudaGraphNode_t copy;
  cudaGraphExec_t x;
  OK(cudaGraphCreate(&g, 0));
  OK(cudaGraphAddMemcpyNode1D(&copy, g, nullptr, 0, dst, src, n, cudaMemcpyDeviceToDevice));
  OK(cudaGraphInstantiate(&x, g, 0));
  OK(cudaFree(dst));
  cudaError_t launched = cudaGraphLaunch(x, 0);
  cudaError_t synced = cudaDeviceSynchronize();
  cudaError_t e = launched != cudaSuccess ? launched : synced;
  if (e != cudaErrorIllegalAddress) {
    std::printf("RESULT FAIL: expected an illegal address, got %s\n", cudaGetErrorName(e));
    return 1;
  }
  std::printf("FAULTED %s\n", cudaGetErrorName(e));
  return 0;
}
