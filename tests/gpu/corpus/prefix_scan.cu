// Exclusive prefix scan in three passes (block scan, scan of block sums,
// add-back), Hillis-Steele inside a block.
#include <vector>

#include "corpus.h"

constexpr int B = 1024;

__global__ void scan_blocks(const unsigned* in, unsigned* out, unsigned* sums, int n) {
  __shared__ unsigned buf[2][B];
  int i = blockIdx.x * B + threadIdx.x;
  unsigned v = i < n ? in[i] : 0;
  int cur = 0;
  buf[cur][threadIdx.x] = v;
  __syncthreads();
  for (int off = 1; off < B; off <<= 1) {
    unsigned x = buf[cur][threadIdx.x];
    if (threadIdx.x >= off) x += buf[cur][threadIdx.x - off];
    buf[cur ^ 1][threadIdx.x] = x;
    cur ^= 1;
    __syncthreads();
  }
  unsigned incl = buf[cur][threadIdx.x];
  if (i < n) out[i] = incl - v;  // exclusive
  if (threadIdx.x == B - 1 && sums) sums[blockIdx.x] = incl;
}

__global__ void add_offsets(unsigned* out, const unsigned* offs, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) out[i] += offs[blockIdx.x];
}

int main() {
  const int n = B * B - 5;  // two levels suffice: nblocks <= B
  const int nb = (n + B - 1) / B;
  std::vector<unsigned> h(n), out(n);
  uint32_t s = 99;
  for (auto& x : h) x = lcg(s) % 1000;
  unsigned *din, *dout, *dsums, *doffs;
  CK(cudaMalloc(&din, n * 4));
  CK(cudaMalloc(&dout, n * 4));
  CK(cudaMalloc(&dsums, nb * 4));
  CK(cudaMalloc(&doffs, nb * 4));
  CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  scan_blocks<<<nb, B>>>(din, dout, dsums, n);
  scan_blocks<<<1, B>>>(dsums, doffs, nullptr, nb);
  add_offsets<<<nb, B>>>(dout, doffs, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  unsigned acc = 0;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    bad += out[i] != acc;
    acc += h[i];
  }
  EXPECT(bad == 0, "%d wrong", bad);
  printf("prefix_scan n=%d blocks=%d total=%u last=%u checksum=%016llx\n", n, nb, acc, out[n - 1],
         (unsigned long long)fnv1a(out.data(), n * 4));
  CK(cudaFree(din));
  CK(cudaFree(dout));
  CK(cudaFree(dsums));
  CK(cudaFree(doffs));
  return finish();
}
