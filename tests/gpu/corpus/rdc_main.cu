// Separate compilation (-rdc=true): the kernel here calls __device__
// functions and reads a __device__ variable defined in rdc_lib.cu; nvcc
// device-links both objects into one cubin.
#include <vector>

#include "corpus.h"

extern __device__ int rdc_poly(int x);          // rdc_lib.cu
extern __device__ float rdc_lerp(float a, float b, float t);
extern __device__ int rdc_bias;                 // defined (and initialized) in rdc_lib.cu
extern __device__ unsigned long long rdc_calls;
__global__ void rdc_lib_kernel(int* d, int n);  // a kernel of the other file

__global__ void rdc_kernel(const int* in, int* out, float* f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = rdc_poly(in[i]) + rdc_bias;
    f[i] = rdc_lerp(0.f, 8.f, float(i % 5) / 4.f);
    atomicAdd(&rdc_calls, 1ull);
  }
}

int main() {
  const int n = 2048;
  std::vector<int> in(n), out(n);
  std::vector<float> f(n);
  for (int i = 0; i < n; ++i) in[i] = i % 41 - 20;
  int *din, *dout;
  float* df;
  CK(cudaMalloc(&din, n * 4));
  CK(cudaMalloc(&dout, n * 4));
  CK(cudaMalloc(&df, n * 4));
  CK(cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice));
  int bias = 0;
  CK(cudaMemcpyFromSymbol(&bias, rdc_bias, sizeof bias));
  printf("rdc_bias initial=%d\n", bias);
  rdc_kernel<<<n / 128, 128>>>(din, dout, df, n);
  rdc_lib_kernel<<<n / 128, 128>>>(dout, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(f.data(), df, n * 4, cudaMemcpyDeviceToHost));
  unsigned long long calls = 0;
  CK(cudaMemcpyFromSymbol(&calls, rdc_calls, sizeof calls));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    int x = in[i];
    bad += out[i] != -(x * x * 3 + 2 * x - 1 + bias);  // rdc_lib_kernel negates
    bad += f[i] != 2.f * float(i % 5);
  }
  EXPECT(bias == 17, "bias %d", bias);
  EXPECT(calls == 2ull * n, "calls %llu", calls);
  EXPECT(bad == 0, "%d wrong", bad);
  printf("rdc_link calls=%llu mismatches=%d checksum=%016llx\n", calls, bad,
         (unsigned long long)fnv1a(out.data(), n * 4));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  CK(cudaFree(df));
  return finish();
}
