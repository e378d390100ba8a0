// __global__ templates taking a templated struct by value (with an embedded
// array and pointers), instantiated for two types and two array sizes.
#include <vector>

#include "corpus.h"

template <typename T, int K>
struct Params {
  const T* in;
  T* out;
  int n;
  T weights[K];  // by value: travels in the parameter buffer
  T bias;
};

template <typename T, int K>
__global__ void conv1d(Params<T, K> p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.n) return;
  T acc = p.bias;
  for (int k = 0; k < K; ++k) {
    int j = i + k - K / 2;
    if (j >= 0 && j < p.n) acc += p.weights[k] * p.in[j];
  }
  p.out[i] = acc;
}

template <typename T, int K>
int run(const char* name) {
  const int n = 3001;
  std::vector<T> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = T(i % 13) - T(6);
  Params<T, K> p{};
  for (int k = 0; k < K; ++k) p.weights[k] = T(k + 1);
  p.bias = T(100);
  p.n = n;
  CK(cudaMalloc((void**)&p.in, n * sizeof(T)));
  CK(cudaMalloc((void**)&p.out, n * sizeof(T)));
  CK(cudaMemcpy((void*)p.in, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  conv1d<T, K><<<(n + 127) / 128, 128>>>(p);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out.data(), p.out, n * sizeof(T), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    T acc = p.bias;
    for (int k = 0; k < K; ++k) {
      int j = i + k - K / 2;
      if (j >= 0 && j < n) acc += p.weights[k] * in[j];
    }
    bad += out[i] != acc;
  }
  EXPECT(bad == 0, "%s: %d wrong", name, bad);
  printf("%-12s sizeof(Params)=%zu mismatches=%d checksum=%016llx\n", name, sizeof(p), bad,
         (unsigned long long)fnv1a(out.data(), n * sizeof(T)));
  CK(cudaFree((void*)p.in));
  CK(cudaFree(p.out));
  return bad;
}

int main() {
  run<float, 5>("float,5");
  run<float, 33>("float,33");
  run<double, 7>("double,7");
  run<int, 64>("int,64");
  return finish();
}
