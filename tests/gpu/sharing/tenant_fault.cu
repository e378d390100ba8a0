// One tenant of the fault containment run (issue 26), a victim or the
// faulting one, on a GPU that other tenants share.
//   victim SECONDS: small-kernel steps for SECONDS once its CUDA is ready
//     (a tenant may wait for the server first), each result checked; the
//     first error stops it.
//   fault DELAY: after DELAY seconds, a kernel that writes through a wild
//     pointer (an illegal address, a sticky fault of its context).
// Prints one line: CONTAINMENT role steps error at_s, where error is the
// first CUDA error's name (none; wrong-result for a result that is wrong
// with no error) and at_s when it came.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

__global__ void step_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void wild_write(float* p) { p[threadIdx.x] = 1.0f; }

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "victim") != 0 && strcmp(argv[1], "fault") != 0)) {
    fprintf(stderr, "usage: tenant_fault victim SECONDS | fault DELAY\n");
    return 2;
  }
  const bool victim = strcmp(argv[1], "victim") == 0;
  const double seconds = atof(argv[2]);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const int n = 4096;
  float* x = nullptr;
  float host[n];
  long steps = 0;
  bool wrong = false;  // a result that CUDA reported no error for, but wrong
  cudaError_t e = cudaMalloc(&x, n * sizeof(float));
  if (e == cudaSuccess) e = cudaMemset(x, 0, n * sizeof(float));
  if (e == cudaSuccess && victim) {
    const double ready = elapsed();
    while (elapsed() - ready < seconds) {
      step_kernel<<<n / 256, 256>>>(x, n);
      if ((e = cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost)) != cudaSuccess) break;
      if (host[0] != static_cast<float>(steps + 1)) {
        wrong = true;
        break;
      }
      ++steps;
    }
  } else if (e == cudaSuccess) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    wild_write<<<1, 32>>>(reinterpret_cast<float*>(uintptr_t{0x10}));
    e = cudaDeviceSynchronize();
  }
  printf("CONTAINMENT %s steps %ld error %s at_s %.2f\n", argv[1], steps,
         wrong ? "wrong-result" : e == cudaSuccess ? "none" : cudaGetErrorName(e), elapsed());
  return victim ? (e == cudaSuccess && !wrong ? 0 : 1) : 0;
}
