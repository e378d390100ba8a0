// Device printf reaches the application's standard output, in order with
// the host's own lines: each kernel prints, the host synchronises and
// prints after it.
#include "corpus.h"

__global__ void say(int round, int n) {
  // One thread prints, so the order of lines is fixed.
  if (threadIdx.x == 0 && blockIdx.x == 0)
    for (int i = 0; i < n; ++i) printf("device round %d line %d value %.3f\n", round, i, i * 0.5f + round);
}

int main() {
  for (int round = 0; round < 3; ++round) {
    printf("host before round %d\n", round);
    say<<<2, 32>>>(round, 4 + round);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("host after round %d\n", round);
  }
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  say<<<1, 1, 0, s>>>(9, 2);
  CK(cudaStreamSynchronize(s));
  printf("host after stream round\n");
  CK(cudaStreamDestroy(s));
  return finish();
}
