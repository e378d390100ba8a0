// Kernel templates instantiated over several element types and a non-type
// parameter: each instantiation is a distinct device function the runtime
// must register and find by its host stub.
#include <cinttypes>
#include <vector>

#include "corpus.h"

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T, int UNROLL>
__global__ void fill_seq(T* y, int n, T base) {
  int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (i0 + u < n) y[i0 + u] = base + T(i0 + u);
}

template <typename T>
int run(const char* tname, T a) {
  const int n = 10007;
  std::vector<T> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = T(i % 50);
    y[i] = T(i % 7);
  }
  T *dx, *dy;
  CK(cudaMalloc(&dx, n * sizeof(T)));
  CK(cudaMalloc(&dy, n * sizeof(T)));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, y.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  axpy<T><<<(n + 127) / 128, 128>>>(a, dx, dy, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != T(a * x[i] + y[i]);
  uint64_t h = fnv1a(out.data(), n * sizeof(T));
  fill_seq<T, 4><<<(n / 4 + 127) / 128, 128>>>(dy, n, T(3));
  fill_seq<T, 1><<<(n + 255) / 256, 256>>>(dx, n, T(3));
  CK(cudaGetLastError());
  std::vector<T> f4(n), f1(n);
  CK(cudaMemcpy(f4.data(), dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(f1.data(), dx, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) bad += f4[i] != T(T(3) + T(i)) || f1[i] != f4[i];
  EXPECT(bad == 0, "%s: %d wrong", tname, bad);
  printf("templates %-8s sizeof=%zu mismatches=%d checksum=%016" PRIx64 "\n", tname, sizeof(T), bad, h);
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  return bad;
}

int main() {
  run<int>("int", 3);
  run<unsigned char>("uchar", 2);
  run<short>("short", -2);
  run<long long>("int64", 1000000007LL);
  run<float>("float", 1.5f);
  run<double>("double", -0.25);
  return finish();
}
