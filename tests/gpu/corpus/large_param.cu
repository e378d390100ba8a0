// Kernel parameters larger than the classic 4 KB limit (CUDA 12.1+, Volta+
// allow up to 32764 bytes): an 8 KB struct and a 30 KB struct by value.
#include "corpus.h"

struct Table8K {
  unsigned v[2048];
};
struct Table30K {
  int n;
  float v[7600];
};

__global__ void sum8k(Table8K t, unsigned long long* out) {
  unsigned long long s = 0;
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s += (unsigned long long)t.v[i] * (i + 1);
  atomicAdd(out, s);
}

__global__ void copy30k(Table30K t, float* out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < t.n; i += gridDim.x * blockDim.x) out[i] = t.v[i];
}

int main() {
  static Table8K a;  // static: keep 38 KB off the host stack
  static Table30K b;
  unsigned long long want = 0;
  for (int i = 0; i < 2048; ++i) {
    a.v[i] = unsigned(i * 2654435761u);
    want += (unsigned long long)a.v[i] * (i + 1);
  }
  b.n = 7600;
  for (int i = 0; i < b.n; ++i) b.v[i] = float(i) * 0.5f - 100.f;
  unsigned long long* dsum;
  float* dout;
  CK(cudaMalloc(&dsum, 8));
  CK(cudaMalloc(&dout, sizeof b.v));
  CK(cudaMemset(dsum, 0, 8));
  sum8k<<<1, 256>>>(a, dsum);
  CK(cudaGetLastError());
  copy30k<<<8, 256>>>(b, dout);
  CK(cudaGetLastError());
  unsigned long long got = 0;
  static float back[7600];
  CK(cudaMemcpy(&got, dsum, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(back, dout, sizeof back, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < b.n; ++i) bad += back[i] != b.v[i];
  EXPECT(got == want, "8K sum %llu != %llu", got, want);
  EXPECT(bad == 0, "30K copy: %d wrong", bad);
  printf("large_param sizeof=%zu,%zu sum=%llu mismatches=%d checksum=%016llx\n", sizeof a, sizeof b, got,
         bad, (unsigned long long)fnv1a(back, sizeof back));
  CK(cudaFree(dsum));
  CK(cudaFree(dout));
  return finish();
}
