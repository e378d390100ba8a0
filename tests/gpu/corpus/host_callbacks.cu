// Host callbacks on real GPU streams: they run in stream order after the
// kernels and copies queued before them (results in page-locked memory are
// in place), on several streams at once, and later work on a stream waits
// until its callback has returned.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "corpus.h"

__global__ void fill(int* d, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = i * 3 + k;
}

struct Check {
  const int* host;
  int n, k;
  long long sum = -1;
  int order = -1;
};

static std::atomic<int> g_next{0};

static void check_fill(void* arg) {
  auto* c = static_cast<Check*>(arg);
  long long sum = 0;
  for (int i = 0; i < c->n; ++i) sum += c->host[i] - (i * 3 + c->k);
  c->sum = sum;
  c->order = g_next++;
}

static std::atomic<bool> g_slow_done{false};
static void slow(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  g_slow_done = true;
}

static cudaError_t g_status = cudaErrorUnknown;
static void status_callback(cudaStream_t, cudaError_t status, void*) { g_status = status; }

int main() {
  const int n = 1 << 20, rounds = 8, streams = 2;
  cudaStream_t s[streams];
  int *d[streams], *h[streams];
  for (int j = 0; j < streams; ++j) {
    CK(cudaStreamCreate(&s[j]));
    CK(cudaMalloc(&d[j], n * sizeof(int)));
    CK(cudaMallocHost(&h[j], n * sizeof(int)));
  }
  std::vector<Check> checks(rounds * streams);
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < streams; ++j) {
      Check& c = checks[r * streams + j];
      c = Check{h[j], n, r * 10 + j};
      fill<<<(n + 255) / 256, 256, 0, s[j]>>>(d[j], n, c.k);
      CK(cudaMemcpyAsync(h[j], d[j], n * sizeof(int), cudaMemcpyDeviceToHost, s[j]));
      CK(cudaLaunchHostFunc(s[j], check_fill, &c));
    }
  }
  for (int j = 0; j < streams; ++j) CK(cudaStreamSynchronize(s[j]));
  int bad = 0;
  for (const Check& c : checks) bad += c.sum != 0 || c.order < 0;
  EXPECT(bad == 0, "%d callbacks saw wrong data or did not run", bad);
  // Within one stream the callbacks ran in the order they were queued.
  for (int j = 0; j < streams; ++j)
    for (int r = 1; r < rounds; ++r)
      EXPECT(checks[r * streams + j].order > checks[(r - 1) * streams + j].order, "stream %d round %d out of order", j, r);

  cudaEvent_t after;
  CK(cudaEventCreate(&after));
  CK(cudaLaunchHostFunc(s[0], slow, nullptr));
  CK(cudaEventRecord(after, s[0]));
  CK(cudaEventSynchronize(after));
  EXPECT(g_slow_done, "the event completed before the callback returned");
  CK(cudaStreamAddCallback(s[1], status_callback, nullptr, 0));
  CK(cudaStreamSynchronize(s[1]));
  EXPECT(g_status == cudaSuccess, "status %s", cudaGetErrorName(g_status));
  printf("callbacks: %d ran with correct data, in order per stream\n", static_cast<int>(checks.size()) - bad);

  CK(cudaEventDestroy(after));
  for (int j = 0; j < streams; ++j) {
    CK(cudaStreamDestroy(s[j]));
    CK(cudaFree(d[j]));
    CK(cudaFreeHost(h[j]));
  }
  return finish();
}
