// All-reduce bandwidth, nccl-tests style: one process drives every visible
// GPU (ncclCommInitAll, one group per all-reduce), float sums from 8 B up to
// --max-bytes doubling; per size --iters all-reduces issued back to back and
// one wait (nccl-tests' -n), the best mean time of several such samples,
// algorithm bandwidth (bytes / time) and bus bandwidth (algbw * 2(n-1)/n,
// what each GPU's links carry). Run locally with NVIDIA's libnccl.so.2 and through rgpu with
// rgpu's (the GPUs then on several servers, NCCL running on the servers).
//   nccl_bandwidth [--max-bytes N] [--seconds S] [--iters N]
// Prints a markdown table, one JSON line, and RESULT PASS when the sums are right.
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.h"

#define NK(call)                                                                             \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      fprintf(stderr, "nccl_bandwidth: %s: %s\n", #call, ncclGetErrorString(r_));            \
      printf("RESULT FAIL\n");                                                               \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  size_t max_bytes = size_t{256} << 20;
  double seconds = 0.5;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-bytes")) max_bytes = std::strtoull(argv[i + 1], nullptr, 0);
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::max(1, std::atoi(argv[i + 1]));
    else {
      fprintf(stderr, "nccl_bandwidth: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  std::vector<ncclComm_t> comms(n);
  auto t0 = Clock::now();
  NK(ncclCommInitAll(comms.data(), n, nullptr));
  double init_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<float*> buf(n);
  std::vector<cudaStream_t> streams(n);
  size_t max_count = max_bytes / sizeof(float);
  for (int d = 0; d < n; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaStreamCreate(&streams[d]));
    CK(cudaMalloc(&buf[d], max_count * sizeof(float)));
  }
  auto launch = [&](size_t count) {
    NK(ncclGroupStart());
    for (int d = 0; d < n; ++d) NK(ncclAllReduce(buf[d], buf[d], count, ncclFloat32, ncclSum, comms[d], streams[d]));
    NK(ncclGroupEnd());
  };
  auto wait = [&] {
    for (int d = 0; d < n; ++d) {
      CK(cudaSetDevice(d));
      CK(cudaStreamSynchronize(streams[d]));
    }
  };
  // Correctness: device d holds d + 1 everywhere; the sum is n(n+1)/2.
  size_t check = std::min<size_t>(max_count, 1 << 20);
  for (int d = 0; d < n; ++d) {
    std::vector<float> h(check, static_cast<float>(d + 1));
    CK(cudaSetDevice(d));
    CK(cudaMemcpy(buf[d], h.data(), check * sizeof(float), cudaMemcpyHostToDevice));
  }
  launch(check);
  wait();
  bool right = true;
  for (int d = 0; d < n; ++d) {
    std::vector<float> h(check);
    CK(cudaSetDevice(d));
    CK(cudaMemcpy(h.data(), buf[d], check * sizeof(float), cudaMemcpyDeviceToHost));
    right &= std::all_of(h.begin(), h.end(), [&](float v) { return v == n * (n + 1) / 2.0f; });
  }
  printf("nccl_bandwidth: %d GPUs, ncclCommInitAll %.2f s, sums %s\n\n", n, init_s, right ? "right" : "WRONG");
  printf("| bytes | time (us) | algbw (GB/s) | busbw (GB/s) |\n|---|---|---|---|\n");
  std::string json = "{\"gpus\":" + std::to_string(n) + ",\"init_s\":" + std::to_string(init_s) + ",\"sizes\":[";
  for (size_t bytes = 8; bytes <= max_bytes; bytes *= 2) {
    size_t count = bytes / sizeof(float);
    launch(count);  // warm-up
    wait();
    double best = 1e30, spent = 0;
    for (int i = 0; i < 5 || (spent < seconds && i < 100); ++i) {
      auto t = Clock::now();
      for (int k = 0; k < iters; ++k) launch(count);
      wait();
      double s = std::chrono::duration<double>(Clock::now() - t).count();
      spent += s;
      best = std::min(best, s / iters);
    }
    double algbw = bytes / best / 1e9, busbw = algbw * 2.0 * (n - 1) / n;
    printf("| %zu | %.1f | %.2f | %.2f |\n", bytes, best * 1e6, algbw, busbw);
    json += (bytes > 8 ? "," : "") + std::string("{\"bytes\":") + std::to_string(bytes) + ",\"us\":" +
            std::to_string(best * 1e6) + ",\"algbw\":" + std::to_string(algbw) + ",\"busbw\":" + std::to_string(busbw) + "}";
  }
  printf("%s]}\n", json.c_str());
  for (int d = 0; d < n; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaFree(buf[d]));
    NK(ncclCommDestroy(comms[d]));
  }
  printf("RESULT %s\n", right ? "PASS" : "FAIL");
  return right ? 0 : 1;
}
