// Error case: an out-of-bounds store faults (illegal address). The error is
// reported asynchronously by cudaDeviceSynchronize and is sticky: the
// context is unusable afterwards and later calls keep failing with it.
#include <cstddef>
#include <cstdint>

#include "corpus.h"

__global__ void oob_store(int* p, long long offset) {
  // `offset` moves the store from the allocation to address 0x40: far out of
  // bounds and never mapped, whether or not the system has HMM.
  p[offset + threadIdx.x] = 1;
}

int main() {
  int* d;
  CK(cudaMalloc(&d, 1024 * sizeof(int)));
  CK(cudaMemset(d, 0, 1024 * sizeof(int)));
  CK(cudaDeviceSynchronize());
  long long offset = -(long long)(reinterpret_cast<uintptr_t>(d) / sizeof(int)) + 16;
  oob_store<<<1, 32>>>(d, offset);
  cudaError_t launch = cudaGetLastError();  // the launch itself is fine
  printf("launch: %s\n", cudaGetErrorName(launch));
  EXPECT(launch == cudaSuccess, "launch failed");

  cudaError_t sync = cudaDeviceSynchronize();
  printf("cudaDeviceSynchronize: %s (%s)\n", cudaGetErrorName(sync), cudaGetErrorString(sync));
  EXPECT(sync == cudaErrorIllegalAddress, "expected cudaErrorIllegalAddress");

  // Sticky: every later call that touches the context reports it again.
  cudaError_t sync2 = cudaDeviceSynchronize();
  printf("second cudaDeviceSynchronize: %s\n", cudaGetErrorName(sync2));
  EXPECT(sync2 == cudaErrorIllegalAddress, "error not sticky on sync");
  void* p2 = nullptr;
  cudaError_t m = cudaMalloc(&p2, 256);
  printf("cudaMalloc after fault: %s\n", cudaGetErrorName(m));
  EXPECT(m != cudaSuccess, "error not sticky on malloc");
  int h = 0;
  cudaError_t c = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("cudaMemcpy after fault: %s\n", cudaGetErrorName(c));
  EXPECT(c != cudaSuccess, "error not sticky on memcpy");
  cudaError_t last = cudaGetLastError();
  printf("cudaGetLastError: %s\n", cudaGetErrorName(last));
  cudaError_t last2 = cudaPeekAtLastError();
  printf("cudaPeekAtLastError after get: %s\n", cudaGetErrorName(last2));
  // Whether the getter clears a sticky error is the runtime's business: only
  // printed, so rgpu must merely agree with the local run.
  EXPECT(last != cudaSuccess, "cudaGetLastError lost the fault");
  return finish();
}
