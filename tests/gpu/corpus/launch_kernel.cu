// Explicit cudaLaunchKernel (argument array, dynamic shared memory, stream),
// next to the equivalent <<<>>> launch; both must give the same result.
#include <algorithm>
#include <vector>

#include "corpus.h"

struct Affine {
  float a, b;
};

__global__ void block_affine_sum(const float* in, float* out, int n, Affine f) {
  extern __shared__ float sh[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sh[threadIdx.x] = i < n ? f.a * in[i] + f.b : 0.f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

int main() {
  const int n = 100000, block = 128, grid = (n + block - 1) / block;
  std::vector<float> h(n), r1(grid), r2(grid);
  for (int i = 0; i < n; ++i) h[i] = float(i % 17);
  float *din, *o1, *o2;
  CK(cudaMalloc(&din, n * 4));
  CK(cudaMalloc(&o1, grid * 4));
  CK(cudaMalloc(&o2, grid * 4));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  Affine f{2.f, 1.f};
  int nn = n;
  void* args[] = {&din, &o1, &nn, &f};
  CK(cudaLaunchKernel((const void*)block_affine_sum, dim3(grid), dim3(block), args, block * sizeof(float), s));
  block_affine_sum<<<grid, block, block * sizeof(float), s>>>(din, o2, n, f);
  CK(cudaGetLastError());
  // The typed C++ overload of cudaLaunchKernel, on the legacy default stream
  // (same arguments: rewrites o1 with identical values).
  CK(cudaLaunchKernel(block_affine_sum, dim3(grid), dim3(block), args, block * sizeof(float), nullptr));
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(r1.data(), o1, grid * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r2.data(), o2, grid * 4, cudaMemcpyDeviceToHost));
  double total = 0;
  int bad = 0;
  for (int b = 0; b < grid; ++b) {
    float want = 0;  // integer-valued floats: exact regardless of summation order
    for (int i = b * block; i < std::min(n, (b + 1) * block); ++i) want += 2.f * h[i] + 1.f;
    bad += r1[b] != want || r2[b] != want;
    total += r1[b];
  }
  EXPECT(bad == 0, "%d wrong blocks", bad);
  printf("launch_kernel blocks=%d mismatches=%d total=%.0f\n", grid, bad, total);
  CK(cudaStreamDestroy(s));
  CK(cudaFree(din));
  CK(cudaFree(o1));
  CK(cudaFree(o2));
  return finish();
}
