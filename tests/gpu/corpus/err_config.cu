// Error case: invalid launch configurations (too many threads per block, grid
// too large, empty grid, too much shared memory) are reported synchronously by
// cudaGetLastError / cudaPeekAtLastError, are NOT sticky, and leave the
// device usable.
#include "corpus.h"

__global__ void touch(int* d) { d[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

// CUDA 12 reports a bad grid/block as cudaErrorInvalidConfiguration; the 13.0
// runtime (measured on an H100, driver 580) reports cudaErrorInvalidValue for
// every case below, <<<>>> and cudaLaunchKernel alike. Either is "rejected";
// the exact name is printed, so rgpu must still match the local run.
static bool rejected(cudaError_t e) {
  return e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue;
}

int main() {
  int* d;
  CK(cudaMalloc(&d, 1 << 20));
  touch<<<1, 2048>>>(d);  // > 1024 threads per block
  cudaError_t peek = cudaPeekAtLastError();
  cudaError_t peek2 = cudaPeekAtLastError();  // peeking does not clear
  cudaError_t get = cudaGetLastError();
  cudaError_t after = cudaGetLastError();     // getting does
  printf("too many threads: peek=%s peek2=%s get=%s after=%s\n", cudaGetErrorName(peek),
         cudaGetErrorName(peek2), cudaGetErrorName(get), cudaGetErrorName(after));
  printf("  string: %s\n", cudaGetErrorString(get));
  EXPECT(rejected(peek) && peek2 == peek && get == peek, "bad config not reported");
  EXPECT(after == cudaSuccess, "error not cleared by cudaGetLastError");

  touch<<<dim3(1, 1, 1), dim3(32, 32, 2)>>>(d);  // 2048 threads as a 3-D block
  cudaError_t e3 = cudaGetLastError();
  printf("3-D block of 2048: %s\n", cudaGetErrorName(e3));
  EXPECT(rejected(e3), "3-D bad config");

  touch<<<dim3(1, 70000, 1), 32>>>(d);  // gridDim.y > 65535
  cudaError_t eg = cudaGetLastError();
  printf("grid y 70000: %s\n", cudaGetErrorName(eg));
  EXPECT(rejected(eg), "grid y");

  touch<<<1, 32, 1 << 20>>>(d);  // 1 MB of dynamic shared memory
  cudaError_t es = cudaGetLastError();
  printf("1 MB dynamic shared memory: %s\n", cudaGetErrorName(es));
  EXPECT(rejected(es), "huge shared memory accepted");

  touch<<<0, 32>>>(d);  // empty grid
  cudaError_t e0 = cudaGetLastError();
  printf("empty grid: %s\n", cudaGetErrorName(e0));
  EXPECT(rejected(e0), "empty grid");

  // Not sticky: a good launch works afterwards.
  touch<<<4, 256>>>(d);
  cudaError_t ok = cudaGetLastError();
  cudaError_t sync = cudaDeviceSynchronize();
  int h[1024];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int ones = 0;
  for (int v : h) ones += v == 1;
  printf("good launch after errors: %s %s ones=%d\n", cudaGetErrorName(ok), cudaGetErrorName(sync), ones);
  EXPECT(ok == cudaSuccess && sync == cudaSuccess && ones == 1024, "device unusable after bad config");
  CK(cudaFree(d));
  return finish();
}
