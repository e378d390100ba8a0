// The host writing managed memory while GPU work that writes it too is
// still queued (a stream held back by a sleeping host function, then
// memsets). Over tcp the host writes a copy that goes back at its next CUDA
// call: what the GPU wrote meanwhile to other bytes is kept, and bytes both
// sides wrote (CPU and GPU atomics on one allocation, as NVIDIA's
// systemWideAtomics does) are reported in rgpu's error log
// (concurrent_writes_test.cpp checks the merge itself). Over shm both
// write the same pages in place.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "check.h"

void CUDART_CB hold_back(void*) { usleep(300 * 1000); }

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  cudaLogIterator start = 0;
  OK(cudaLogsCurrent(&start, 0));
  int* m = nullptr;
  OK(cudaMallocManaged(&m, 1 << 20));
  std::memset(m, 0, 1 << 20);
  cudaStream_t s;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  OK(cudaLaunchHostFunc(s, hold_back, nullptr));
  OK(cudaMemsetAsync(m + 1024, 0x11, 4096, s));  // bytes only the GPU writes
  OK(cudaMemsetAsync(m, 0x22, sizeof(int), s));  // a word both write
  m[0] = 5;
  m[10] = 7;  // a word only the host writes
  usleep(800 * 1000);  // the GPU's writes land meanwhile
  OK(cudaDeviceSynchronize());
  CHECK(m[1024] == 0x11111111 && m[2047] == 0x11111111 && m[2048] == 0);
  CHECK(m[10] == 7 && m[11] == 0);
  char log[4096] = {};
  size_t size = sizeof log;
  OK(cudaLogsDumpToMemory(&start, log, &size, 0));
  bool reported = std::string(log).find("written by the host and by the GPU at once") != std::string::npos;
  // Over tcp the host's copy wins the word both wrote, reported when the
  // GPU's write landed after the host fetched the chunk (on the GPU; the
  // test backend runs the stream before the fetch). Over shm the GPU's
  // write came last, and nothing can be reported.
  CHECK(shm ? m[0] == 0x22222222 && !reported : m[0] == 5);
  // Synchronized first, the host's accesses raise nothing.
  OK(cudaMemsetAsync(m + 4096, 0x33, 64, s));
  OK(cudaDeviceSynchronize());
  m[4096] = 9;
  OK(cudaDeviceSynchronize());
  CHECK(m[4096] == 9 && m[4097] == 0x33333333);
  OK(cudaStreamDestroy(s));
  OK(cudaFree(m));
  return finish();
}
