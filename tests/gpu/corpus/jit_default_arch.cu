// Built with nvcc's default architecture (sm_75 SASS + compute_75 PTX): on an
// H100 the sm_75 code cannot run, so the driver JIT-compiles the PTX. Uses
// warp intrinsics so the JIT has real work.
#include <vector>

#include "corpus.h"

__global__ void warp_stats(const int* in, int* sums, unsigned* ballots, int* pops, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int s = v;
  for (int m = 16; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);  // butterfly
  unsigned b = __ballot_sync(0xffffffffu, v > 0);
  int warp = i / 32;
  if ((threadIdx.x & 31) == 0 && warp * 32 < n) {
    sums[warp] = s;
    ballots[warp] = b;
    pops[warp] = __popc(b);
  }
}

int main() {
  int rt = 0;
  CK(cudaRuntimeGetVersion(&rt));
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, warp_stats));
  // binaryVersion is the arch of the code that actually runs (JIT output on
  // an H100); ptxVersion is the PTX target it came from.
  printf("ptxVersion=%d binaryVersion=%d\n", a.ptxVersion, a.binaryVersion);
  const int n = 1 << 16, warps = n / 32;
  std::vector<int> h(n), sums(warps), pops(warps);
  std::vector<unsigned> ballots(warps);
  uint32_t s = 5;
  for (auto& x : h) x = int(lcg(s) % 201) - 100;
  int *din, *dsum, *dpop;
  unsigned* dbal;
  CK(cudaMalloc(&din, n * 4));
  CK(cudaMalloc(&dsum, warps * 4));
  CK(cudaMalloc(&dpop, warps * 4));
  CK(cudaMalloc(&dbal, warps * 4));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  warp_stats<<<n / 256, 256>>>(din, dsum, dbal, dpop, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(sums.data(), dsum, warps * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(pops.data(), dpop, warps * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ballots.data(), dbal, warps * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int w = 0; w < warps; ++w) {
    int sum = 0;
    unsigned b = 0;
    for (int l = 0; l < 32; ++l) {
      sum += h[w * 32 + l];
      b |= unsigned(h[w * 32 + l] > 0) << l;
    }
    bad += sums[w] != sum || ballots[w] != b || pops[w] != __builtin_popcount(b);
  }
  EXPECT(bad == 0, "%d warps wrong", bad);
  printf("jit warps=%d mismatches=%d checksum=%016llx\n", warps, bad,
         (unsigned long long)fnv1a(sums.data(), warps * 4));
  CK(cudaFree(din));
  CK(cudaFree(dsum));
  CK(cudaFree(dpop));
  CK(cudaFree(dbal));
  return finish();
}
