// cudaHostRegister of a malloc'd (page-locking) buffer, used as source and
// destination of async copies; pointer attributes before, during and after
// registration; cudaHostUnregister.
#include <cstdlib>
#include <cstring>

#include "corpus.h"

__global__ void negate(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = -d[i];
}

int main() {
  const int n = 4 << 20;  // 16 MB
  const size_t bytes = n * sizeof(int);
  int* buf = static_cast<int*>(malloc(bytes));  // deliberately not page aligned by us
  if (!buf) return printf("RESULT FAIL\n"), 1;
  for (int i = 0; i < n; ++i) buf[i] = i ^ 0x5555;

  cudaPointerAttributes a;
  CK(cudaPointerGetAttributes(&a, buf));
  printf("before register: %s\n", type_name(a.type));
  CK(cudaHostRegister(buf, bytes, cudaHostRegisterDefault));
  CK(cudaPointerGetAttributes(&a, buf + 100));  // an interior pointer resolves too
  printf("registered: %s hostPointer==p: %s\n", type_name(a.type), a.hostPointer == buf + 100 ? "yes" : "no");
  EXPECT(a.type == cudaMemoryTypeHost, "registered memory not host type");

  int* d;
  CK(cudaMalloc(&d, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Several async copies in halves, so both ends of the range are used.
  CK(cudaMemcpyAsync(d, buf, bytes / 2, cudaMemcpyHostToDevice, s));
  CK(cudaMemcpyAsync(d + n / 2, buf + n / 2, bytes / 2, cudaMemcpyHostToDevice, s));
  negate<<<n / 256, 256, 0, s>>>(d, n);
  CK(cudaMemcpyAsync(buf, d, bytes, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += buf[i] != -(i ^ 0x5555);
  EXPECT(bad == 0, "%d wrong", bad);
  printf("round trip mismatches=%d checksum=%016llx\n", bad, (unsigned long long)fnv1a(buf, bytes));

  CK(cudaHostUnregister(buf));
  CK(cudaPointerGetAttributes(&a, buf));
  printf("after unregister: %s\n", type_name(a.type));
  EXPECT(a.type == cudaMemoryTypeUnregistered, "still registered");
  cudaError_t again = cudaHostUnregister(buf);
  printf("second unregister: %s\n", cudaGetErrorName(again));
  EXPECT(again != cudaSuccess, "double unregister succeeded");
  cudaGetLastError();
  // Still usable as ordinary pageable memory.
  CK(cudaMemcpy(buf, d, bytes, cudaMemcpyDeviceToHost));
  EXPECT(buf[1] == -(1 ^ 0x5555), "pageable copy after unregister");
  CK(cudaStreamDestroy(s));
  CK(cudaFree(d));
  free(buf);
  return finish();
}
