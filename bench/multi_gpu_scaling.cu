// A fixed amount of compute-bound work (chains of fused multiply-adds, one
// per element) split across 1..N GPUs, one host thread and stream per GPU:
// each thread copies its share of the elements in, runs the launches and
// copies the share back. Run locally and through rgpu (GPUs of several
// servers), the times give the speed-up of N GPUs over one and rgpu's
// cost against local.
//
// Every element's chain is independent of how the elements are split, so
// every split must give bit-identical results; sampled elements are also
// recomputed on the CPU (fmaf is exact in IEEE arithmetic, so they match
// bit for bit). --iterations 0 launches the same kernels doing no
// arithmetic: the data path alone (the host-memory test backend, which
// runs no kernels, passes it).
//
// usage: multi_gpu_scaling [--elements N] [--iterations K] [--launches L] [--repeat R] [--max-gpus G]
// Prints one line per GPU count and, last, one JSON object:
//   {"devices": D, "fma": total fused multiply-adds,
//    "runs": [{"gpus": n, "seconds": best wall time, "checksum": sum}, ...]}
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"

using Clock = std::chrono::steady_clock;

// v <- v * (1 - 2^-24) + b: values stay bounded (far below b * 2^24) and
// never reach a fixed point within millions of steps, so every launch
// skipped or repeated shows in the results.
__host__ __device__ inline float chain_step(float v, float b) { return fmaf(v, 0.999999940395355224609375f, b); }
__host__ __device__ inline float chain_offset(size_t i) { return 1e-4f * static_cast<float>(i % 61); }

// x holds elements first .. first + n - 1 of the whole array.
__global__ void fma_chains(float* x, size_t n, size_t first, int iterations) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  const float b = chain_offset(first + i);
#pragma unroll 16
  for (int k = 0; k < iterations; ++k) v = chain_step(v, b);
  x[i] = v;
}

struct Options {
  size_t elements = size_t{1} << 24;
  int iterations = 32768;
  int launches = 96;
  int repeat = 2;
  int max_gpus = 0;  // 0: every device
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    long long v = std::atoll(argv[i + 1]);
    if (k == "--elements") o.elements = static_cast<size_t>(v);
    else if (k == "--iterations") o.iterations = static_cast<int>(v);
    else if (k == "--launches") o.launches = static_cast<int>(v);
    else if (k == "--repeat") o.repeat = static_cast<int>(v);
    else if (k == "--max-gpus") o.max_gpus = static_cast<int>(v);
    else {
      fprintf(stderr, "multi_gpu_scaling: unknown option %s\n", k.c_str());
      exit(2);
    }
  }
  if (o.elements == 0 || o.iterations < 0 || o.launches < 1 || o.repeat < 1) {
    fprintf(stderr, "multi_gpu_scaling: bad sizes\n");
    exit(2);
  }
  return o;
}

float initial_value(size_t i) { return static_cast<float>(i % 1000) * 1e-3f; }

// One GPU's part: its buffer, its stream, its share of the elements.
struct Share {
  int device = 0;
  size_t begin = 0, count = 0;
  float* buffer = nullptr;
  cudaStream_t stream = nullptr;
};

// Runs the whole work on `gpus` devices at once; returns the wall time from
// the first copy in to the last copy back.
double run_split(int gpus, const Options& o, float* host) {
  for (size_t i = 0; i < o.elements; ++i) host[i] = initial_value(i);
  std::vector<Share> shares(gpus);
  for (int d = 0; d < gpus; ++d) {
    Share& s = shares[d];
    s.device = d;
    s.begin = o.elements * d / gpus;
    s.count = o.elements * (d + 1) / gpus - s.begin;
    CK(cudaSetDevice(d));
    CK(cudaMalloc(&s.buffer, s.count * sizeof(float)));
    CK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    // Warm-up: the module is loaded and the first launch paid before timing.
    fma_chains<<<1, 32, 0, s.stream>>>(s.buffer, 0, 0, 0);
    CK(cudaStreamSynchronize(s.stream));
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (Share& s : shares) {
    threads.emplace_back([&, &s = s] {
      CK(cudaSetDevice(s.device));
      // A first call from this thread before timing (through rgpu a thread's
      // first call opens its connection to the server).
      CK(cudaStreamSynchronize(s.stream));
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      const size_t bytes = s.count * sizeof(float);
      CK(cudaMemcpyAsync(s.buffer, host + s.begin, bytes, cudaMemcpyHostToDevice, s.stream));
      const unsigned blocks = static_cast<unsigned>((s.count + 255) / 256);
      for (int l = 0; l < o.launches; ++l) fma_chains<<<blocks, 256, 0, s.stream>>>(s.buffer, s.count, s.begin, o.iterations);
      CK(cudaGetLastError());
      CK(cudaMemcpyAsync(host + s.begin, s.buffer, bytes, cudaMemcpyDeviceToHost, s.stream));
      CK(cudaStreamSynchronize(s.stream));
    });
  }
  while (ready.load() < gpus) std::this_thread::yield();
  auto t0 = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (Share& s : shares) {
    CK(cudaSetDevice(s.device));
    CK(cudaStreamDestroy(s.stream));
    CK(cudaFree(s.buffer));
  }
  return seconds;
}

double checksum(const float* x, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

// Recomputes a few elements spread over every share on the CPU.
bool matches_cpu(const float* x, const Options& o) {
  const size_t samples = 16;
  for (size_t s = 0; s < samples; ++s) {
    size_t i = (o.elements - 1) * s / (samples - 1);
    float v = initial_value(i);
    const float b = chain_offset(i);
    for (long long k = 0; k < static_cast<long long>(o.iterations) * o.launches; ++k) v = chain_step(v, b);
    if (std::memcmp(&v, &x[i], sizeof v) != 0) {
      fprintf(stderr, "multi_gpu_scaling: element %zu is %.9g, the CPU computes %.9g\n", i, x[i], v);
      return false;
    }
  }
  return true;
}

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  int devices = 0;
  CK(cudaGetDeviceCount(&devices));
  int max_gpus = o.max_gpus > 0 ? std::min(o.max_gpus, devices) : devices;
  float* host = nullptr;
  CK(cudaMallocHost(&host, o.elements * sizeof(float)));
  std::vector<float> first;
  const double fma = static_cast<double>(o.elements) * o.iterations * o.launches;
  printf("multi_gpu_scaling: %d device(s), %zu elements x %d iterations x %d launches = %.3g FMA\n", devices,
         o.elements, o.iterations, o.launches, fma);
  bool ok = true;
  std::string runs;
  double one_gpu = 0;
  for (int gpus = 1; gpus <= max_gpus; ++gpus) {
    double best = 1e300;
    for (int r = 0; r < o.repeat; ++r) best = std::min(best, run_split(gpus, o, host));
    double sum = checksum(host, o.elements);
    if (gpus == 1) {
      one_gpu = best;
      first.assign(host, host + o.elements);
      if (!matches_cpu(host, o)) ok = false;
    } else if (std::memcmp(first.data(), host, o.elements * sizeof(float)) != 0) {
      fprintf(stderr, "multi_gpu_scaling: %d GPUs computed other values than one GPU\n", gpus);
      ok = false;
    }
    printf("gpus=%d seconds=%.4f speedup=%.3f efficiency=%.3f checksum=%.9g\n", gpus, best, one_gpu / best,
           one_gpu / best / gpus, sum);
    char run[160];
    snprintf(run, sizeof run, "%s{\"gpus\": %d, \"seconds\": %.6f, \"checksum\": %.17g}", runs.empty() ? "" : ", ",
             gpus, best, sum);
    runs += run;
  }
  CK(cudaFreeHost(host));
  printf("{\"devices\": %d, \"fma\": %.6g, \"runs\": [%s]}\n", devices, fma, runs.c_str());
  printf("RESULT %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
