// Two fat binaries in one program: each file has its own kernels and a
// variable of the same (file-local) name, kept apart per module.
#include "check.h"

static __device__ int value;
__global__ void kernel_a(int* out) { out[0] = value; }

void run_b(int* failures);

int main() {
  int* d = nullptr;
  OK(cudaMalloc(&d, sizeof(int)));
  int v = 11;
  OK(cudaMemcpyToSymbol(value, &v, sizeof v));
  kernel_a<<<1, 1>>>(d);
  OK(cudaGetLastError());
  run_b(&g_failures);
  int back = 0;
  OK(cudaMemcpyFromSymbol(&back, value, sizeof back));
  CHECK(back == 11);
  OK(cudaFree(d));
  return finish();
}
