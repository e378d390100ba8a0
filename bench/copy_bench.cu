// copy_bench: latency and bandwidth of synchronous cudaMemcpy, to compare a
// local run (NVIDIA's libcudart) with a run through rgpu. Runtime API only.
//
// Build: nvcc -cudart shared -O2 -o copy_bench bench/copy_bench.cu
// Run:   ./copy_bench > local.json;  rgpu run -- ./copy_bench > rgpu.json
//
// Output: one JSON object on stdout. Keys:
//   device                          GPU name (string)
//   lat64_{pinned,pageable}_{h2d,d2h}_us
//       latency of one 64-byte cudaMemcpy, in microseconds: median of 2000
//       timed copies after 200 warm-up copies. "pinned" host memory comes
//       from cudaMallocHost, "pageable" from malloc.
//   bw_{pinned,pageable}_{h2d,d2h}_gbs_{32MB,256MB}
//       bandwidth of one cudaMemcpy of 32 MiB / 256 MiB (MB here = 2^20
//       bytes), in GB/s = 1e9 bytes/s: best of 5 timed copies after one
//       warm-up copy.
// Every copy is timed with std::chrono::steady_clock around the synchronous
// cudaMemcpy call, so the figures include everything the caller waits for
// (for rgpu: the network round trip and the server's work).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "copy_bench: %s failed: %s\n", #call, cudaGetErrorName(e_));            \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

using Clock = std::chrono::steady_clock;

static double seconds_of(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  auto t0 = Clock::now();
  CK(cudaMemcpy(dst, src, bytes, kind));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

static double median_latency_us(void* dst, const void* src, cudaMemcpyKind kind) {
  constexpr int kWarmup = 200, kIters = 2000;
  for (int i = 0; i < kWarmup; ++i) seconds_of(dst, src, 64, kind);
  std::vector<double> t(kIters);
  for (auto& x : t) x = seconds_of(dst, src, 64, kind);
  std::nth_element(t.begin(), t.begin() + kIters / 2, t.end());
  return t[kIters / 2] * 1e6;
}

static double best_bandwidth_gbs(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  seconds_of(dst, src, bytes, kind);  // warm-up: first-touch, pinning caches, connection buffers
  double best = 1e30;
  for (int i = 0; i < 5; ++i) best = std::min(best, seconds_of(dst, src, bytes, kind));
  return double(bytes) / best / 1e9;
}

int main() {
  const size_t big = size_t(256) << 20, mid = size_t(32) << 20;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  void* dev;
  CK(cudaMalloc(&dev, big));
  void* pinned;
  CK(cudaMallocHost(&pinned, big));
  void* pageable = malloc(big);
  if (!pageable) return fprintf(stderr, "copy_bench: malloc failed\n"), 1;
  // Touch every page up front so page faults are not timed.
  memset(pinned, 1, big);
  memset(pageable, 1, big);
  CK(cudaMemset(dev, 0, big));
  CK(cudaDeviceSynchronize());

  std::vector<std::pair<std::string, double>> out;
  struct Host {
    const char* name;
    void* p;
  } hosts[] = {{"pinned", pinned}, {"pageable", pageable}};
  for (auto& h : hosts) {
    out.emplace_back(std::string("lat64_") + h.name + "_h2d_us", median_latency_us(dev, h.p, cudaMemcpyHostToDevice));
    out.emplace_back(std::string("lat64_") + h.name + "_d2h_us", median_latency_us(h.p, dev, cudaMemcpyDeviceToHost));
  }
  for (auto& h : hosts)
    for (auto [bytes, tag] : {std::pair{mid, "32MB"}, std::pair{big, "256MB"}}) {
      out.emplace_back(std::string("bw_") + h.name + "_h2d_gbs_" + tag,
                       best_bandwidth_gbs(dev, h.p, bytes, cudaMemcpyHostToDevice));
      out.emplace_back(std::string("bw_") + h.name + "_d2h_gbs_" + tag,
                       best_bandwidth_gbs(h.p, dev, bytes, cudaMemcpyDeviceToHost));
    }

  printf("{\n  \"device\": \"%s\"", prop.name);  // GPU names carry no quotes or backslashes
  for (auto& [k, v] : out) printf(",\n  \"%s\": %.3f", k.c_str(), v);
  printf("\n}\n");

  free(pageable);
  CK(cudaFreeHost(pinned));
  CK(cudaFree(dev));
  return 0;
}
