// Two host threads that must make progress at the same time: thread A
// launches a kernel that spins until a flag in device memory is set and then
// blocks in cudaStreamSynchronize; thread B sets the flag with a copy on
// another stream. If B's calls waited for A's blocking call, neither would
// finish: a watchdog turns that deadlock into a failure. Built with
// --default-stream per-thread, both threads use their default stream, which
// must then be a stream of each thread's own.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "corpus.h"

__global__ void wait_for_flag(volatile int* flag, int* out) {
  while (*flag == 0) {
  }
  out[threadIdx.x] = *flag * 10 + threadIdx.x;
}

int main() {
  int *flag, *out;
  CK(cudaMalloc(&flag, sizeof(int)));
  CK(cudaMalloc(&out, 32 * sizeof(int)));
  CK(cudaMemset(flag, 0, sizeof(int)));
  CK(cudaMemset(out, 0, 32 * sizeof(int)));
  cudaStream_t sa = 0, sb = 0;
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
#endif
  CK(cudaDeviceSynchronize());

  std::atomic<bool> launched{false}, done{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 300 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done) {
      printf("DEADLOCK: thread B could not set the flag while thread A waited\nRESULT FAIL\n");
      fflush(stdout);
      std::_Exit(1);
    }
  });
  std::thread a([&] {
    wait_for_flag<<<1, 32, 0, sa>>>(flag, out);
    CK(cudaGetLastError());
    launched = true;
    CK(cudaStreamSynchronize(sa));
  });
  std::thread b([&] {
    while (!launched) std::this_thread::yield();
    // Give A time to be inside its synchronize.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int seven = 7;
    CK(cudaMemcpyAsync(flag, &seven, sizeof seven, cudaMemcpyHostToDevice, sb));
    CK(cudaStreamSynchronize(sb));
  });
  a.join();
  b.join();
  done = true;
  watchdog.join();

  int host[32];
  CK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i) EXPECT(host[i] == 70 + i, "out[%d] = %d", i, host[i]);
  printf("kernel saw the flag: out[0]=%d out[31]=%d\n", host[0], host[31]);
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
  CK(cudaStreamDestroy(sa));
  CK(cudaStreamDestroy(sb));
#endif
  CK(cudaFree(flag));
  CK(cudaFree(out));
  return finish();
}
