// Several fat binaries in one program: this file, multi_fatbin_a.cu and
// multi_fatbin_b.cu are compiled separately (whole-program mode, no -rdc),
// each registering its own fat binary, and linked together.
#include <vector>

#include "corpus.h"

void part_a(int* d, int n, int mul);
void part_b(int* d, int n, int add);
int part_b_calls();

namespace {
__global__ void step(int* d, int n) {  // third kernel named `step`
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] - 1;
}
}  // namespace

int main() {
  const int n = 5000;
  std::vector<int> h(n), out(n);
  for (int i = 0; i < n; ++i) h[i] = i % 97;
  int* d;
  CK(cudaMalloc(&d, n * sizeof(int)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  for (int round = 0; round < 3; ++round) {
    part_a(d, n, 3);
    part_b(d, n, round);
    step<<<(n + 63) / 64, 64>>>(d, n);
    CK(cudaGetLastError());
    for (int i = 0; i < n; ++i) h[i] = (h[i] * 3 + round + i) - 1;
  }
  CK(cudaMemcpy(out.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != h[i];
  int calls = part_b_calls();
  EXPECT(bad == 0, "%d wrong", bad);
  EXPECT(calls == 3, "b_calls=%d", calls);
  printf("multi_fatbin mismatches=%d b_calls=%d checksum=%016llx\n", bad, calls,
         (unsigned long long)fnv1a(out.data(), n * sizeof(int)));
  CK(cudaFree(d));
  return finish();
}
