#include <cuda_runtime.h>

static __device__ int value;
__global__ void kernel_b(int* out, int add) { out[0] = value + add; }

void run_b(int* failures) {
  int v = 22, back = 0;
  int* d = nullptr;
  if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) ++*failures;
  if (cudaMemcpyToSymbol(value, &v, sizeof v) != cudaSuccess) ++*failures;
  kernel_b<<<1, 1>>>(d, 1);
  if (cudaGetLastError() != cudaSuccess) ++*failures;
  if (cudaMemcpyFromSymbol(&back, value, sizeof back) != cudaSuccess || back != 22) ++*failures;
  cudaFree(d);
}
