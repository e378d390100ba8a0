// Multi-threaded host: two std::threads, each with its own stream, pinned
// buffers and device buffer, issuing interleaved copies and kernels at the
// same time. The runtime (and rgpu's client) must be thread safe.
#include <thread>
#include <vector>

#include "corpus.h"

__global__ void mix(unsigned* d, int n, unsigned k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = (d[i] ^ k) * 2246822519u + k;
}

static unsigned host_mix(unsigned v, unsigned k) { return (v ^ k) * 2246822519u + k; }

struct Result {
  int bad = 0;
  unsigned long long sum = 0;
  int err = 0;
};

static void worker(int id, Result* r) {
  // Each thread names its device: the current device is per host thread.
  if (cudaSetDevice(0) != cudaSuccess) { r->err = 1; return; }
  const int n = 1 << 18, iters = 50;
  cudaStream_t s;
  unsigned *h, *d;
  if (cudaStreamCreate(&s) || cudaMallocHost(&h, n * 4) || cudaMalloc(&d, n * 4)) { r->err = 1; return; }
  std::vector<unsigned> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = h[i] = unsigned(i * (id + 3));
  if (cudaMemcpyAsync(d, h, n * 4, cudaMemcpyHostToDevice, s)) r->err = 1;
  for (int it = 0; it < iters; ++it) {
    unsigned k = unsigned(it * 131 + id);
    mix<<<n / 256, 256, 0, s>>>(d, n, k);
    for (int i = 0; i < n; ++i) ref[i] = host_mix(ref[i], k);
    if (it % 10 == 9) {  // periodic round trips on this thread's stream
      if (cudaMemcpyAsync(h, d, n * 4, cudaMemcpyDeviceToHost, s) || cudaStreamSynchronize(s)) r->err = 1;
      for (int i = 0; i < n; ++i) r->bad += h[i] != ref[i];
    }
  }
  if (cudaGetLastError() != cudaSuccess) r->err = 1;
  for (int i = 0; i < n; ++i) r->sum += h[i];
  if (cudaStreamDestroy(s) || cudaFreeHost(h) || cudaFree(d)) r->err = 1;
}

int main() {
  Result r[2];
  std::thread t0(worker, 0, &r[0]), t1(worker, 1, &r[1]);
  t0.join();
  t1.join();
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < 2; ++i) {
    EXPECT(r[i].err == 0 && r[i].bad == 0, "thread %d: err=%d bad=%d", i, r[i].err, r[i].bad);
    printf("thread %d: errors=%d mismatches=%d sum=%llu\n", i, r[i].err, r[i].bad, r[i].sum);
  }
  int dev = -1;
  CK(cudaGetDevice(&dev));
  printf("main thread device=%d\n", dev);
  return finish();
}
