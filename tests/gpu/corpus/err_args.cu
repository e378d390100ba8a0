// Error case: invalid arguments to runtime calls are reported immediately by
// name, are not sticky, and cudaGetLastError returns (and clears) the last
// one. Also error names/strings for a few codes, including an unknown one.
#include <cstdlib>

#include "corpus.h"

static void show(const char* what, cudaError_t e) {
  printf("%-34s %s\n", what, cudaGetErrorName(e));
}

int main() {
  int* d;
  CK(cudaMalloc(&d, 4096));
  int h[16] = {};

  cudaError_t dir = cudaMemcpy(d, h, sizeof h, static_cast<cudaMemcpyKind>(42));
  show("cudaMemcpy bogus kind:", dir);
  EXPECT(dir == cudaErrorInvalidMemcpyDirection, "bogus kind");

  cudaError_t last = cudaGetLastError();
  show("cudaGetLastError after it:", last);
  EXPECT(last == cudaErrorInvalidMemcpyDirection, "last error not recorded");
  show("cudaGetLastError again:", cudaGetLastError());

  int on_stack = 0;
  cudaError_t f1 = cudaFree(&on_stack);  // a host address
  show("cudaFree(host stack address):", f1);
  EXPECT(f1 != cudaSuccess, "cudaFree of a host pointer succeeded");
  cudaError_t f2 = cudaFree(reinterpret_cast<void*>(0x1234));
  show("cudaFree(0x1234):", f2);
  EXPECT(f2 != cudaSuccess, "cudaFree of garbage succeeded");
  cudaError_t f3 = cudaFree(reinterpret_cast<char*>(d) + 16);  // inside, not the base
  show("cudaFree(interior pointer):", f3);
  EXPECT(f3 != cudaSuccess, "cudaFree of interior pointer succeeded");
  cudaError_t f0 = cudaFree(nullptr);
  show("cudaFree(nullptr):", f0);
  EXPECT(f0 == cudaSuccess, "cudaFree(nullptr) must be a no-op");

  cudaError_t sd = cudaSetDevice(999);
  show("cudaSetDevice(999):", sd);
  EXPECT(sd == cudaErrorInvalidDevice, "cudaSetDevice(999)");
  cudaError_t sdn = cudaSetDevice(-1);
  show("cudaSetDevice(-1):", sdn);
  EXPECT(sdn == cudaErrorInvalidDevice, "cudaSetDevice(-1)");
  int dev = -1;
  CK(cudaGetDevice(&dev));
  printf("current device still %d\n", dev);
  EXPECT(dev == 0, "device changed by a failed cudaSetDevice");

  cudaDeviceProp prop;
  cudaError_t gp = cudaGetDeviceProperties(&prop, 999);
  show("cudaGetDeviceProperties(999):", gp);
  EXPECT(gp == cudaErrorInvalidDevice, "props of device 999");
  int attr = 0;
  cudaError_t ga = cudaDeviceGetAttribute(&attr, cudaDevAttrWarpSize, 999);
  show("cudaDeviceGetAttribute(dev 999):", ga);
  EXPECT(ga == cudaErrorInvalidDevice, "attr of device 999");

  void* big = nullptr;
  cudaError_t oom = cudaMalloc(&big, size_t(1) << 50);  // 1 PiB
  show("cudaMalloc(1 PiB):", oom);
  EXPECT(oom == cudaErrorMemoryAllocation, "1 PiB allocation");

  cudaError_t null_out = cudaMalloc(nullptr, 16);
  show("cudaMalloc(nullptr out):", null_out);
  EXPECT(null_out == cudaErrorInvalidValue, "cudaMalloc(nullptr)");

  // None of the above is sticky.
  cudaGetLastError();
  CK(cudaMemset(d, 0x7f, 4096));
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  printf("device usable afterwards: h[0]=%08x\n", h[0]);
  EXPECT(h[0] == 0x7f7f7f7f, "memset result");

  const cudaError_t codes[] = {cudaSuccess, cudaErrorInvalidValue, cudaErrorMemoryAllocation,
                               cudaErrorInvalidDevice, cudaErrorIllegalAddress,
                               cudaErrorLaunchOutOfResources, cudaErrorNotReady,
                               static_cast<cudaError_t>(9999)};
  for (cudaError_t c : codes)
    printf("code %4d: %s | %s\n", int(c), cudaGetErrorName(c), cudaGetErrorString(c));
  CK(cudaFree(d));
  return finish();
}
