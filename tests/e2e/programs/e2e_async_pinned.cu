// Asynchronous copies from and to page-locked memory return at once, as
// locally, and are in place (in order) once the stream is synchronised, also
// when another thread synchronises.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "check.h"

using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int main() {
  const size_t n = 48u << 20;
  unsigned char *src, *dst;
  OK(cudaMallocHost(&src, n));
  OK(cudaMallocHost(&dst, n));
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  std::memset(dst, 0, n);
  unsigned char* d = nullptr;
  OK(cudaMalloc(&d, n));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));

  auto t0 = Clock::now();
  OK(cudaMemcpyAsync(d, src, n, cudaMemcpyHostToDevice, s));
  OK(cudaMemcpyAsync(dst, d, n, cudaMemcpyDeviceToHost, s));
  double queued_ms = ms_since(t0);
  OK(cudaStreamSynchronize(s));
  double done_ms = ms_since(t0);
  CHECK(std::memcmp(src, dst, n) == 0);
  std::printf("queued in %.2f ms, done in %.2f ms\n", queued_ms, done_ms);
  // Over the network queueing must not wait for the data to cross it twice.
  const char* transport = std::getenv("RGPU_TRANSPORT");
  if (transport && std::strcmp(transport, "shm") != 0) CHECK(queued_ms * 4 < done_ms);

  // Another thread's synchronisation also sees the data in place.
  std::memset(dst, 0, n);
  OK(cudaMemsetAsync(d, 0x5a, n, s));
  OK(cudaMemcpyAsync(dst, d, n, cudaMemcpyDeviceToHost, s));
  std::thread other([&] {
    OK(cudaStreamSynchronize(s));
    CHECK(dst[0] == 0x5a && dst[n / 2] == 0x5a && dst[n - 1] == 0x5a);
  });
  other.join();

  // Small downloads (read back by a later call) are in place after a
  // synchronize of this thread, of another thread, for a host function
  // queued after them, and after an event; each is a separate copy.
  unsigned char* small = dst;
  for (int round = 0; round < 3; ++round) {
    OK(cudaMemsetAsync(d, 0x20 + round, 4096, s));
    for (int i = 0; i < 4; ++i) OK(cudaMemcpyAsync(small + i * 1024, d + i * 1024, 1024, cudaMemcpyDeviceToHost, s));
    if (round == 0) {
      OK(cudaStreamSynchronize(s));
    } else if (round == 1) {
      std::thread other([&] { OK(cudaStreamSynchronize(s)); });
      other.join();
    } else {
      cudaEvent_t ev;
      OK(cudaEventCreate(&ev));
      OK(cudaEventRecord(ev, s));
      OK(cudaEventSynchronize(ev));
      OK(cudaEventDestroy(ev));
    }
    CHECK(small[0] == 0x20 + round && small[2047] == 0x20 + round && small[4095] == 0x20 + round);
  }
  static unsigned char seen;
  OK(cudaMemsetAsync(d, 0x42, 64, s));
  OK(cudaMemcpyAsync(small, d, 64, cudaMemcpyDeviceToHost, s));
  OK(cudaLaunchHostFunc(s, [](void* p) { seen = *static_cast<unsigned char*>(p); }, small));
  OK(cudaStreamSynchronize(s));
  CHECK(seen == 0x42);

  // Freeing page-locked memory waits for copies still using it.
  OK(cudaMemcpyAsync(d, src, n, cudaMemcpyHostToDevice, s));
  OK(cudaFreeHost(src));
  std::memset(dst, 0, n);
  OK(cudaMemcpy(dst, d, 4096, cudaMemcpyDeviceToHost));
  CHECK(dst[1] == static_cast<unsigned char>(1 * 7 + 3));

  OK(cudaStreamDestroy(s));
  OK(cudaFree(d));
  OK(cudaFreeHost(dst));
  return finish();
}
