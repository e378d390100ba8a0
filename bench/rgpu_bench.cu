// The figures `rgpu bench` compares: run once against NVIDIA's runtime
// (local) and once through rgpu, in the same `rgpu bench` invocation.
// Prints one JSON object:
//   startup_ms            first CUDA call of the process (cudaFree(0))
//   lat64_{pinned,pageable}_{h2d,d2h}_us   median 64-byte cudaMemcpy
//   bw_{pinned,pageable}_{h2d,d2h}         {"<bytes>": GB/s, ...} from 4 KB
//                                          to 1 GB (best of several copies)
//   launch_async_us       mean time to enqueue one empty kernel
//   launch_sync_us        median empty-kernel launch + cudaDeviceSynchronize
//   func_attributes_us    mean cudaFuncGetAttributes of a kernel asked about
//                         before (NVIDIA's libraries ask before many launches)
// usage: rgpu_bench [--max-bytes N]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.h"

using Clock = std::chrono::steady_clock;

__global__ void empty_kernel() {}

static double since_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static double latency_us(void* dst, const void* src, cudaMemcpyKind kind) {
  std::vector<double> t;
  for (int i = 0; i < 1200; ++i) {
    auto t0 = Clock::now();
    CK(cudaMemcpy(dst, src, 64, kind));
    if (i >= 200) t.push_back(since_us(t0));
  }
  return median(t);
}

// Best of enough copies to fill ~0.2 s (at least 3).
static double bandwidth_gbs(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  CK(cudaMemcpy(dst, src, n, kind));
  double best = 0, spent = 0;
  for (int i = 0; i < 3 || (spent < 2e5 && i < 1000); ++i) {
    auto t0 = Clock::now();
    CK(cudaMemcpy(dst, src, n, kind));
    double us = since_us(t0);
    spent += us;
    best = std::max(best, n / us / 1e3);
  }
  return best;
}

int main(int argc, char** argv) {
  auto start = Clock::now();
  CK(cudaFree(nullptr));
  double startup_ms = since_us(start) / 1e3;
  size_t max_bytes = size_t{1} << 30;
  if (argc == 3 && std::strcmp(argv[1], "--max-bytes") == 0) max_bytes = std::strtoull(argv[2], nullptr, 10);

  char *dev, *pinned;
  CK(cudaMalloc(&dev, max_bytes));
  CK(cudaMallocHost(&pinned, max_bytes));
  std::vector<char> pageable(max_bytes, 1);
  std::memset(pinned, 1, max_bytes);

  printf("{\n  \"startup_ms\": %.3f,\n", startup_ms);
  struct Side {
    const char* name;
    char* host;
  } sides[] = {{"pinned", pinned}, {"pageable", pageable.data()}};
  for (auto& s : sides) {
    printf("  \"lat64_%s_h2d_us\": %.3f,\n", s.name, latency_us(dev, s.host, cudaMemcpyHostToDevice));
    printf("  \"lat64_%s_d2h_us\": %.3f,\n", s.name, latency_us(s.host, dev, cudaMemcpyDeviceToHost));
  }
  for (auto& s : sides) {
    for (int d = 0; d < 2; ++d) {
      printf("  \"bw_%s_%s\": {", s.name, d ? "d2h" : "h2d");
      for (size_t n = 4096; n <= max_bytes; n *= 4) {
        double gbs = d ? bandwidth_gbs(s.host, dev, n, cudaMemcpyDeviceToHost)
                       : bandwidth_gbs(dev, s.host, n, cudaMemcpyHostToDevice);
        printf("%s\"%zu\": %.3f", n == 4096 ? "" : ", ", n, gbs);
      }
      printf("},\n");
    }
  }
  empty_kernel<<<1, 1>>>();
  CK(cudaDeviceSynchronize());
  const int launches = 20000;
  auto t0 = Clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1>>>();
  double async_us = since_us(t0) / launches;
  CK(cudaDeviceSynchronize());
  std::vector<double> sync;
  for (int i = 0; i < 2000; ++i) {
    auto t1 = Clock::now();
    empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    sync.push_back(since_us(t1));
  }
  cudaFuncAttributes attributes;
  CK(cudaFuncGetAttributes(&attributes, empty_kernel));
  const int queries = 1000;
  auto t2 = Clock::now();
  for (int i = 0; i < queries; ++i) CK(cudaFuncGetAttributes(&attributes, empty_kernel));
  double attributes_us = since_us(t2) / queries;
  printf("  \"launch_async_us\": %.3f,\n  \"launch_sync_us\": %.3f,\n  \"func_attributes_us\": %.3f\n}\n", async_us,
         median(sync), attributes_us);
  CK(cudaFreeHost(pinned));
  CK(cudaFree(dev));
  return 0;
}
