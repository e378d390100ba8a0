// cudaDeviceReset in the middle of a program: all allocations and streams go
// away, module state (__device__ initializers) is restored, and the runtime
// re-initializes lazily on the next call, so work continues normally.
#include "corpus.h"

__device__ int d_value = 7;

__global__ void bump(int* out, int k) {
  d_value += k;
  *out = d_value;
}

static int run_once(int k) {
  int* d;
  CK(cudaMalloc(&d, sizeof(int)));
  bump<<<1, 1>>>(d, k);
  CK(cudaGetLastError());
  int h = 0;
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  // Intentionally no cudaFree: the reset must reclaim it.
  return h;
}

int main() {
  int a = run_once(1), b = run_once(10);
  printf("before reset: %d %d\n", a, b);
  EXPECT(a == 8 && b == 18, "first context");
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cudaDeviceReset());
  printf("reset done\n");

  int c = run_once(100);  // __device__ initializer back to 7
  printf("after reset: %d\n", c);
  EXPECT(c == 107, "d_value not re-initialized by reset");
  int from_symbol = 0;
  CK(cudaMemcpyFromSymbol(&from_symbol, d_value, sizeof from_symbol));
  EXPECT(from_symbol == 107, "symbol read after reset");

  // Fresh streams, events and memory work in the new context.
  cudaStream_t s2;
  cudaEvent_t e;
  CK(cudaStreamCreate(&s2));
  CK(cudaEventCreate(&e));
  int* d;
  CK(cudaMalloc(&d, 1 << 20));
  CK(cudaMemsetAsync(d, 0x3c, 1 << 20, s2));
  CK(cudaEventRecord(e, s2));
  CK(cudaEventSynchronize(e));
  unsigned char h[64];
  CK(cudaMemcpy(h, d + 1000, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (unsigned char v : h) bad += v != 0x3c;
  EXPECT(bad == 0, "memset after reset");
  printf("after reset: memset ok=%s\n", bad == 0 ? "yes" : "no");
  CK(cudaEventDestroy(e));
  CK(cudaStreamDestroy(s2));
  CK(cudaFree(d));
  (void)s;  // belonged to the old context; must not be used any more

  CK(cudaDeviceReset());  // twice in a row is fine
  int e2 = run_once(0);
  printf("after second reset: %d\n", e2);
  EXPECT(e2 == 7, "second reset");
  return finish();
}
