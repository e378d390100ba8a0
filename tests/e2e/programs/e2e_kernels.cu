// Kernels: registration, <<<>>> and cudaLaunchKernel with the parameter
// layouts the server reports, per-kernel attributes, occupancy and symbols.
// (The test backend validates launches but does not run them.)
#include <cstring>

#include "check.h"

struct Params {
  double scale;
  char tag;
  int offsets[5];
};

__constant__ float c_coeffs[16];
__device__ int d_counter;
__device__ double d_table[300];

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + c_coeffs[0];
}

__global__ void with_struct(Params p, char c, double* out) { out[0] = p.scale + c + p.offsets[4]; }

template <typename T>
__global__ void fill(T* out, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void no_params() { atomicAdd(&d_counter, 1); }

extern "C" __global__ void dyn_shared(float* out) {
  extern __shared__ float buf[];
  buf[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = buf[threadIdx.x];
}

int main() {
  float *x, *y;
  OK(cudaMalloc(&x, 1024 * sizeof(float)));
  OK(cudaMalloc(&y, 1024 * sizeof(float)));
  saxpy<<<4, 256>>>(1024, 2.0f, x, y);
  OK(cudaGetLastError());
  Params p{1.5, 'x', {1, 2, 3, 4, 5}};
  double* out;
  OK(cudaMalloc(&out, sizeof(double)));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  with_struct<<<1, 1, 0, s>>>(p, 'c', out);
  OK(cudaGetLastError());
  fill<int><<<2, 128>>>(reinterpret_cast<int*>(y), 7, 256);
  fill<double><<<1, 64, 0, s>>>(out, 2.0, 1);
  no_params<<<1, 1>>>();
  OK(cudaPeekAtLastError());

  int n = 1024;
  float a = 3.0f;
  void* args[] = {&n, &a, &x, &y};
  OK(cudaLaunchKernel(reinterpret_cast<const void*>(saxpy), dim3(4), dim3(256), args, 0, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaDeviceSynchronize());

  // Invalid configurations fail at the launch itself (CUDA 13 says
  // cudaErrorInvalidValue for these).
  saxpy<<<1, 4096>>>(1024, 2.0f, x, y);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetLastError());
  saxpy<<<0, 32>>>(1024, 2.0f, x, y);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetLastError());
  EXPECT_STATUS(cudaErrorInvalidDeviceFunction,
                cudaLaunchKernel(reinterpret_cast<const void*>(&main), dim3(1), dim3(1), nullptr, 0, 0));
  cudaGetLastError();

  cudaFuncAttributes attr;
  OK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(saxpy)));
  CHECK(attr.maxThreadsPerBlock > 0);
  // More than 48 KB of dynamic shared memory needs the attribute first.
  dyn_shared<<<1, 32, 100 * 1024>>>(y);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetLastError());
  OK(cudaFuncSetAttribute(reinterpret_cast<const void*>(dyn_shared), cudaFuncAttributeMaxDynamicSharedMemorySize,
                          100 * 1024));
  dyn_shared<<<1, 32, 100 * 1024>>>(y);
  OK(cudaGetLastError());
  OK(cudaFuncSetCacheConfig(reinterpret_cast<const void*>(saxpy), cudaFuncCachePreferL1));
  int blocks = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, saxpy, 256, 0));
  CHECK(blocks > 0);
  int min_grid = 0, block_size = 0;
  OK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, saxpy, 0, 0));
  CHECK(block_size > 0 && min_grid > 0);

  // Symbols: copies to and from __constant__ and __device__ variables.
  float coeffs[16];
  for (int i = 0; i < 16; ++i) coeffs[i] = i * 0.25f;
  OK(cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof coeffs));
  float coeffs_back[16] = {};
  OK(cudaMemcpyFromSymbol(coeffs_back, c_coeffs, sizeof coeffs));
  CHECK(std::memcmp(coeffs, coeffs_back, sizeof coeffs) == 0);
  int counter = 41;
  OK(cudaMemcpyToSymbolAsync(d_counter, &counter, sizeof counter, 0, cudaMemcpyHostToDevice, s));
  int counter_back = 0;
  OK(cudaMemcpyFromSymbolAsync(&counter_back, d_counter, sizeof counter, 0, cudaMemcpyDeviceToHost, s));
  OK(cudaStreamSynchronize(s));
  CHECK(counter_back == 41);
  size_t size = 0;
  OK(cudaGetSymbolSize(&size, d_table));
  CHECK(size == 300 * sizeof(double));
  double* table = nullptr;
  OK(cudaGetSymbolAddress(reinterpret_cast<void**>(&table), d_table));
  double values[3] = {1, 2, 3};
  OK(cudaMemcpy(table + 297, values, sizeof values, cudaMemcpyHostToDevice));
  double values_back[3] = {};
  OK(cudaMemcpyFromSymbol(values_back, d_table, sizeof values, 297 * sizeof(double)));
  CHECK(values_back[2] == 3);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof coeffs, 4));
  EXPECT_STATUS(cudaErrorInvalidSymbol, cudaMemcpyToSymbol(&counter, coeffs, 4));

  OK(cudaStreamDestroy(s));
  OK(cudaFree(x));
  OK(cudaFree(y));
  OK(cudaFree(out));
  return finish();
}
