// A job's program in slurm_pool_test.sh: allocates MIB MiB on each GPU it
// sees (MIB,MIB,...: one per GPU, the last for the GPUs after it), fills
// it, keeps it SECONDS seconds (the pool sees it held, other jobs run
// meanwhile), then checks it is intact. Prints, per GPU, what it reported:
// "gpu=<i> total=<cudaMemGetInfo's total, MiB> alloc=<cudaMalloc's result>".
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pool_alloc MIB[,MIB...] SECONDS\n");
    return 2;
  }
  std::vector<size_t> sizes;
  const std::string list = argv[1];
  for (size_t start = 0;;) {
    size_t comma = list.find(',', start);
    sizes.push_back(std::stoull(list.substr(start, comma - start)) << 20);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto size_of = [&](int gpu) { return sizes[std::min<size_t>(gpu, sizes.size() - 1)]; };
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  std::vector<void*> held(count, nullptr);
  for (int gpu = 0; gpu < count; ++gpu) {
    OK(cudaSetDevice(gpu));
    size_t free_bytes = 0, total_bytes = 0;
    OK(cudaMemGetInfo(&free_bytes, &total_bytes));
    cudaError_t alloc = cudaMalloc(&held[gpu], size_of(gpu));
    std::printf("gpu=%d total=%zu alloc=%s\n", gpu, total_bytes >> 20, cudaGetErrorName(alloc));
    if (alloc == cudaSuccess) OK(cudaMemset(held[gpu], 0x5a, size_of(gpu)));
    else held[gpu] = nullptr;
  }
  std::fflush(stdout);
  sleep(std::atoi(argv[2]));
  for (int gpu = 0; gpu < count; ++gpu) {
    if (!held[gpu]) continue;
    OK(cudaSetDevice(gpu));
    CHECK(all(read_back(held[gpu], size_of(gpu)), 0x5a));
    OK(cudaFree(held[gpu]));
  }
  return finish();
}
