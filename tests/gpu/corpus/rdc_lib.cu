// Device library half of rdc_link (see rdc_main.cu).
__device__ int rdc_bias = 17;
__device__ unsigned long long rdc_calls = 0;

__device__ int rdc_poly(int x) { return x * x * 3 + 2 * x - 1; }
__device__ float rdc_lerp(float a, float b, float t) { return a + (b - a) * t; }

__global__ void rdc_lib_kernel(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    d[i] = -d[i];
    atomicAdd(&rdc_calls, 1ull);
  }
}
