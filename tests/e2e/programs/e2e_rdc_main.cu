// Separate compilation (-rdc): the kernel here calls a device function
// defined in e2e_rdc_lib.cu; nvcc's device link registers one linked image.
#include "check.h"

__device__ float scale_value(float v);
__device__ int rdc_calls;

__global__ void apply(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = scale_value(v[i]);
  if (i == 0) atomicAdd(&rdc_calls, 1);
}

void launch_lib_kernel(float* v, int n);

int main() {
  float* d = nullptr;
  OK(cudaMalloc(&d, 256 * sizeof(float)));
  apply<<<1, 256>>>(d, 256);
  OK(cudaGetLastError());
  launch_lib_kernel(d, 256);
  OK(cudaGetLastError());
  OK(cudaDeviceSynchronize());
  int calls = 5;
  OK(cudaMemcpyToSymbol(rdc_calls, &calls, sizeof calls));
  int back = 0;
  OK(cudaMemcpyFromSymbol(&back, rdc_calls, sizeof back));
  CHECK(back == 5);
  OK(cudaFree(d));
  return finish();
}
