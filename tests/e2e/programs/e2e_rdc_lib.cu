#include <cuda_runtime.h>

__device__ float scale_value(float v) { return v * 2.0f + 1.0f; }

__global__ void lib_kernel(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = scale_value(v[i]);
}

void launch_lib_kernel(float* v, int n) { lib_kernel<<<(n + 127) / 128, 128>>>(v, n); }
