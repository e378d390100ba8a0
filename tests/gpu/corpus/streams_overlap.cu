// Copy/compute overlap: pinned host memory split into chunks, round-robin
// over 4 streams, each chunk H2D -> kernel -> D2H on its stream.
#include <vector>

#include "corpus.h"

__global__ void transform(unsigned* d, int n, unsigned salt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned v = d[i];
    for (int r = 0; r < 16; ++r) v = v * 2654435761u + salt;  // some work per element
    d[i] = v;
  }
}

static unsigned host_transform(unsigned v, unsigned salt) {
  for (int r = 0; r < 16; ++r) v = v * 2654435761u + salt;
  return v;
}

int main() {
  const int kStreams = 4, kChunks = 16, chunk = 1 << 20;  // 16 x 4 MB
  const size_t n = size_t(kChunks) * chunk;
  unsigned *hin, *hout, *d;
  CK(cudaMallocHost(&hin, n * 4));
  CK(cudaMallocHost(&hout, n * 4));
  CK(cudaMalloc(&d, n * 4));
  for (size_t i = 0; i < n; ++i) hin[i] = unsigned(i * 31u + 7u);
  cudaStream_t st[kStreams];
  for (auto& s : st) CK(cudaStreamCreate(&s));
  for (int c = 0; c < kChunks; ++c) {
    cudaStream_t s = st[c % kStreams];
    size_t off = size_t(c) * chunk;
    CK(cudaMemcpyAsync(d + off, hin + off, chunk * 4, cudaMemcpyHostToDevice, s));
    transform<<<chunk / 256, 256, 0, s>>>(d + off, chunk, unsigned(c));
    CK(cudaMemcpyAsync(hout + off, d + off, chunk * 4, cudaMemcpyDeviceToHost, s));
  }
  CK(cudaGetLastError());
  for (auto& s : st) CK(cudaStreamSynchronize(s));
  for (auto& s : st) EXPECT(cudaStreamQuery(s) == cudaSuccess, "stream not idle after sync");
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += hout[i] != host_transform(hin[i], unsigned(i / chunk));
  EXPECT(bad == 0, "%zu wrong", bad);
  printf("streams_overlap streams=%d chunks=%d mismatches=%zu checksum=%016llx\n", kStreams, kChunks,
         bad, (unsigned long long)fnv1a(hout, n * 4));
  for (auto& s : st) CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  CK(cudaFreeHost(hin));
  CK(cudaFreeHost(hout));
  return finish();
}
