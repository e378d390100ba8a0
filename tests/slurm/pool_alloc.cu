// A job's program in slurm_pool_test.sh: allocates MIB MiB of device memory,
// fills it, keeps it SECONDS seconds (the pool sees it held, other jobs run
// meanwhile), then checks it is intact. Prints what the GPU reported:
//   total=<cudaMemGetInfo's total, MiB> alloc=<cudaMalloc's result> RESULT PASS|FAIL
#include <unistd.h>

#include <cstdlib>

#include "check.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pool_alloc MIB SECONDS\n");
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10) << 20;
  size_t free_bytes = 0, total_bytes = 0;
  OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  void* d = nullptr;
  cudaError_t alloc = cudaMalloc(&d, bytes);
  std::printf("total=%zu alloc=%s\n", total_bytes >> 20, cudaGetErrorName(alloc));
  if (alloc == cudaSuccess) {
    OK(cudaMemset(d, 0x5a, bytes));
    std::fflush(stdout);
    sleep(std::atoi(argv[2]));
    CHECK(all(read_back(d, bytes), 0x5a));
    OK(cudaFree(d));
  }
  return finish();
}
