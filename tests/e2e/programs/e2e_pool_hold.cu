// A job's long-running session (issue 11): holds POOL_HOLD bytes on its
// GPU, writes a page of it (bytes the server's metrics count whatever its
// module cache holds), says HOLDING, and waits until the file POOL_RELEASE appears. Then it
// allocates POOL_MORE bytes more (its amount untouched by other jobs) and
// frees all. A session its job's end cut off finds its calls failing and
// says LOST.
#include <unistd.h>

#include <cstdlib>

#include "check.h"

int main() {
  const size_t hold = std::strtoull(std::getenv("POOL_HOLD") ? std::getenv("POOL_HOLD") : "0", nullptr, 10);
  const size_t more = std::strtoull(std::getenv("POOL_MORE") ? std::getenv("POOL_MORE") : "0", nullptr, 10);
  const char* release = std::getenv("POOL_RELEASE");
  void* p = nullptr;
  if (cudaMalloc(&p, hold) != cudaSuccess) {
    std::printf("RESULT FAIL: cannot hold %zu bytes\n", hold);
    return 1;
  }
  static char page[4096];
  if (hold) OK(cudaMemcpy(p, page, hold < sizeof page ? hold : sizeof page, cudaMemcpyHostToDevice));
  std::printf("HOLDING\n");
  std::fflush(stdout);
  for (int i = 0; i < 600 && !(release && access(release, F_OK) == 0); ++i) {
    usleep(100000);
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      std::printf("LOST\n");
      return 3;
    }
  }
  void* q = nullptr;
  OK(cudaMalloc(&q, more));
  OK(cudaFree(q));
  OK(cudaFree(p));
  std::printf("RESULT %s\n", g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
