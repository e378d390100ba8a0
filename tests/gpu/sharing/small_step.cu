// One tenant of the sharing benchmark (issue 26): for SECONDS, steps of a
// small-kernel workload (KERNELS launches of a grid of a few blocks, as a
// batch-1 inference step makes, then a synchronize), each result checked.
// Prints the SMs it may use (an MPS share lowers them), its step count and
// step latencies. With SHARING_START_AT (seconds since the epoch) the timed
// steps start then, after a warm-up step, so that tenants that took
// different times to start run side by side for the whole window; one that
// is ready only after it says LATE.
//   usage: small_step SECONDS [KERNELS] [BLOCKS]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

__global__ void step_kernel(float* x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
  x[i] = v;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 10;
  const int kernels = argc > 2 ? atoi(argv[2]) : 8;
  const int blocks = argc > 3 ? atoi(argv[3]) : 16;
  const int threads = 256, n = blocks * threads;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("SMS %d\n", sms);
  float* x = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMemset(x, 0, n * sizeof(float)) != cudaSuccess) {
    printf("RESULT FAIL: no memory\n");
    return 1;
  }
  // Warm-up: the module loads, the first launch pays its set-up.
  step_kernel<<<blocks, threads>>>(x, n, 1);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("RESULT FAIL: warm-up: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  if (const char* at = std::getenv("SHARING_START_AT")) {
    const auto start = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(atof(at))));
    if (std::chrono::system_clock::now() > start) printf("LATE\n");
    std::this_thread::sleep_until(start);
  }
  using Clock = std::chrono::steady_clock;
  std::vector<double> latencies_us;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    for (int k = 0; k < kernels; ++k) step_kernel<<<blocks, threads>>>(x, n, 2000);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      printf("RESULT FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  // Every element converges toward 1 from 0: the work was done.
  float sample = 0;
  cudaMemcpy(&sample, x, sizeof sample, cudaMemcpyDeviceToHost);
  if (!(sample > 0.f && sample <= 1.f)) {
    printf("RESULT FAIL: result %f\n", sample);
    return 1;
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  const size_t steps = latencies_us.size();
  double sum = 0;
  for (double l : latencies_us) sum += l;
  printf("SHARING steps %zu seconds %.3f mean_us %.1f p50_us %.1f p99_us %.1f\n", steps, seconds,
         steps ? sum / steps : 0, steps ? latencies_us[steps / 2] : 0,
         steps ? latencies_us[std::min(steps - 1, steps * 99 / 100)] : 0);
  printf("RESULT PASS\n");
  return 0;
}
