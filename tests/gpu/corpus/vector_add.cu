// Vector add: the basic malloc / H2D / <<<>>> / D2H / free round trip.
#include <vector>

#include "corpus.h"

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;  // not a multiple of the block size below on purpose
  const int len = n + 77;
  std::vector<float> a(len), b(len), c(len, -1.f);
  for (int i = 0; i < len; ++i) {
    a[i] = float(i % 1000);  // small integers: float sums are exact
    b[i] = float((i * 7) % 513);
  }
  float *da, *db, *dc;
  size_t bytes = len * sizeof(float);
  CK(cudaMalloc(&da, bytes));
  CK(cudaMalloc(&db, bytes));
  CK(cudaMalloc(&dc, bytes));
  CK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
  int block = 256, grid = (len + block - 1) / block;
  vadd<<<grid, block>>>(da, db, dc, len);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < len; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong elements", bad);
  printf("vector_add n=%d mismatches=%d checksum=%016llx\n", len, bad,
         (unsigned long long)fnv1a(c.data(), bytes));
  CK(cudaFree(da));
  CK(cudaFree(db));
  CK(cudaFree(dc));
  return finish();
}
