// Host callbacks run in this process, in stream order, after the work queued
// before them (data of earlier copies in place), and later work waits for
// them.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "check.h"

struct Record {
  std::vector<int> order;
  cudaStream_t seen_stream = nullptr;
  cudaError_t seen_status = cudaErrorUnknown;
  unsigned char* pinned = nullptr;
  int pinned_value = -1;
  std::atomic<bool> slow_done{false};
};

static Record g;

static void append(void* arg) { g.order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(arg))); }
static void stream_callback(cudaStream_t s, cudaError_t status, void*) {
  g.seen_stream = s;
  g.seen_status = status;
}
static void read_pinned(void*) { g.pinned_value = g.pinned[12345]; }
static void slow(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  g.slow_done = true;
}

int main() {
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  const size_t n = 4u << 20;
  unsigned char* d = nullptr;
  OK(cudaMalloc(&d, n));
  OK(cudaMallocHost(&g.pinned, n));

  for (int i = 0; i < 50; ++i) {
    OK(cudaMemsetAsync(d, i, n, s));
    OK(cudaLaunchHostFunc(s, append, reinterpret_cast<void*>(static_cast<intptr_t>(i))));
  }
  OK(cudaStreamAddCallback(s, stream_callback, nullptr, 0));
  OK(cudaMemsetAsync(d, 0x77, n, s));
  OK(cudaMemcpyAsync(g.pinned, d, n, cudaMemcpyDeviceToHost, s));
  OK(cudaLaunchHostFunc(s, read_pinned, nullptr));
  OK(cudaStreamSynchronize(s));
  CHECK(g.order.size() == 50);
  for (int i = 0; i < static_cast<int>(g.order.size()); ++i) CHECK(g.order[i] == i);
  CHECK(g.seen_stream == s);
  CHECK(g.seen_status == cudaSuccess);
  CHECK(g.pinned_value == 0x77);

  // The stream waits for a slow callback: an event recorded after it
  // completes only once the callback returned.
  cudaEvent_t after;
  OK(cudaEventCreate(&after));
  OK(cudaLaunchHostFunc(s, slow, nullptr));
  OK(cudaEventRecord(after, s));
  OK(cudaEventSynchronize(after));
  CHECK(g.slow_done);

  // The default stream takes callbacks too; bad arguments are refused.
  g.order.clear();
  OK(cudaLaunchHostFunc(0, append, reinterpret_cast<void*>(7)));
  OK(cudaDeviceSynchronize());
  CHECK(g.order.size() == 1 && g.order[0] == 7);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLaunchHostFunc(s, nullptr, nullptr));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaStreamAddCallback(s, stream_callback, nullptr, 1));

  OK(cudaEventDestroy(after));
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(g.pinned));
  OK(cudaFree(d));
  return finish();
}
