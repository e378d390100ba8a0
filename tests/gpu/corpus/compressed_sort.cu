// Built with --compress-mode=size: the fat binary is compressed and must be
// decompressed by whoever loads it. Many template instantiations (a bitonic
// sort per key type and block size) make the image big enough to matter.
#include <algorithm>
#include <vector>

#include "corpus.h"

template <typename T, int N>  // N keys per block, N/2 threads
__global__ void bitonic(T* data) {
  __shared__ T sh[N];
  T* base = data + size_t(blockIdx.x) * N;
  for (int i = threadIdx.x; i < N; i += blockDim.x) sh[i] = base[i];
  __syncthreads();
  for (int k = 2; k <= N; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < N / 2; t += blockDim.x) {
        int lo = 2 * t - (t & (j - 1)), hi = lo + j;
        bool up = (lo & k) == 0;
        T a = sh[lo], b = sh[hi];
        if ((a > b) == up) {
          sh[lo] = b;
          sh[hi] = a;
        }
      }
      __syncthreads();
    }
  for (int i = threadIdx.x; i < N; i += blockDim.x) base[i] = sh[i];
}

template <typename T, int N>
int run(const char* name) {
  const int blocks = 64;
  std::vector<T> h(size_t(N) * blocks);
  uint32_t s = N * 31 + sizeof(T);
  for (auto& x : h) x = T(lcg(s) >> 8) - T(1 << 22);
  T* d;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  bitonic<T, N><<<blocks, std::min(N / 2, 512)>>>(d);
  CK(cudaGetLastError());
  std::vector<T> out(h.size());
  CK(cudaMemcpy(out.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) std::sort(h.begin() + size_t(b) * N, h.begin() + size_t(b + 1) * N);
  int bad = out != h;
  EXPECT(!bad, "%s not sorted", name);
  printf("%-14s %s checksum=%016llx\n", name, bad ? "WRONG" : "sorted",
         (unsigned long long)fnv1a(out.data(), out.size() * sizeof(T)));
  CK(cudaFree(d));
  return bad;
}

int main() {
  run<int, 256>("int/256");
  run<int, 2048>("int/2048");
  run<unsigned, 1024>("uint/1024");
  run<float, 512>("float/512");
  run<float, 4096>("float/4096");
  run<double, 1024>("double/1024");
  run<long long, 2048>("int64/2048");
  run<short, 4096>("short/4096");
  return finish();
}
