// Two host threads, each with its own stream, copying at the same time.
#include <thread>
#include <vector>

#include "check.h"

static void worker(int id, int* failures) {
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaSuccess) {
    ++*failures;
    return;
  }
  const size_t n = 1 << 18;
  std::vector<int> h(n, id), back(n);
  int* d = nullptr;
  cudaMalloc(&d, n * sizeof(int));
  for (int round = 0; round < 20; ++round) {
    for (auto& v : h) v = id * 1000 + round;
    cudaMemcpyAsync(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(back.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    if (back[n - 1] != id * 1000 + round) ++*failures;
  }
  cudaFree(d);
  cudaStreamDestroy(s);
}

int main() {
  int failures[2] = {0, 0};
  std::thread a(worker, 1, &failures[0]);
  std::thread b(worker, 2, &failures[1]);
  a.join();
  b.join();
  CHECK(failures[0] == 0 && failures[1] == 0);
  return finish();
}
