// CUDA called from an exit handler, after the main thread's thread-local
// objects are gone (exit() destroys them first): libraries do this from their
// static destructors (PyTorch's cuFFT plan cache calls cuCtxPushCurrent from
// cufftDestroy). The per-thread state rgpu keeps (context stack, launch
// configurations, the thread's connection) must still be there; under the
// sanitizer build a use after free fails the run.
#include <cuda.h>

#include <cstdlib>

#include "check.h"

__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }

namespace {

// Uses each piece of per-thread state once.
void use_thread_state(int value) {
  CUcontext primary = nullptr;
  CHECK(cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS);
  CHECK(cuCtxPushCurrent(primary) == CUDA_SUCCESS);
  int* d = nullptr;
  OK(cudaMalloc(&d, 32 * sizeof(int)));
  // The test backend validates launches without running them: the bytes come from a memset.
  fill<<<1, 32>>>(d, value);
  OK(cudaGetLastError());
  OK(cudaMemset(d, value, 32 * sizeof(int)));
  unsigned char h[32 * sizeof(int)] = {};
  OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  for (unsigned char x : h) CHECK(x == value);
  OK(cudaFree(d));
  CUcontext popped = nullptr;
  CHECK(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
  CHECK(popped == primary);
  CHECK(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
}

// The verdict comes from here: a crash or a failed call in the handler fails the test.
void at_exit() {
  use_thread_state(7);
  finish();
  std::fflush(stdout);
}

}  // namespace

int main() {
  CHECK(cuInit(0) == CUDA_SUCCESS);
  use_thread_state(3);
  std::atexit(at_exit);
  return 0;
}
