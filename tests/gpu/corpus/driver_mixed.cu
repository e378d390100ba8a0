// Driver and runtime API in one program: the runtime's allocations feed a
// driver launch and the driver's allocations a runtime kernel, streams and
// events cross over, and cuCtxGetCurrent sees the context cudaSetDevice made.
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

__global__ void negate(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = -data[i];
}

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  CUcontext current = nullptr, primary = nullptr;
  CU(cuCtxGetCurrent(&current));
  CU(cuDevicePrimaryCtxRetain(&primary, 0));
  EXPECT(current == primary, "cuCtxGetCurrent is not device 0's primary context");
  CUdevice dev = -1;
  CU(cuCtxGetDevice(&dev));
  EXPECT(dev == 0, "cuCtxGetDevice gave %d", dev);

  const int n = 100003;
  std::vector<float> a(n), b(n), c(n, 0.f);
  for (int i = 0; i < n; ++i) a[i] = float(i % 997), b[i] = float(i % 13);
  float *ra, *rb;
  CK(cudaMalloc(&ra, n * sizeof(float)));
  CK(cudaMalloc(&rb, n * sizeof(float)));
  CK(cudaMemcpy(ra, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(rb), b.data(), n * sizeof(float)));
  CUmemorytype type;
  CUcontext owner = nullptr;
  int ordinal = -1;
  CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(ra + 3)));
  CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(ra)));
  CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(ra)));
  EXPECT(type == CU_MEMORYTYPE_DEVICE && owner == primary && ordinal == 0,
         "runtime allocation: memory type %d, ordinal %d, %s context", int(type), ordinal,
         owner == primary ? "primary" : "other");
  printf("runtime allocation seen by the driver: device memory of device %d\n", ordinal);
  CUdeviceptr dc;
  CU(cuMemAlloc(&dc, n * sizeof(float)));

  CUmodule module;
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction vadd;
  // A driver error is the driver call's own: cudaGetLastError does not see it.
  CUresult missing = cuModuleGetFunction(&vadd, module, "no_such_kernel");
  printf("unknown kernel: %s, then cudaGetLastError: %s\n", cu_error_name(missing),
         cudaGetErrorName(cudaGetLastError()));
  CU(cuModuleGetFunction(&vadd, module, "vadd"));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  int nn = n;
  void* args[] = {&ra, &rb, &dc, &nn};
  CU(cuLaunchKernel(vadd, (n + 127) / 128, 1, 1, 128, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr));
  cudaEvent_t done;
  CK(cudaEventCreate(&done));
  CU(cuEventRecord(reinterpret_cast<CUevent>(done), reinterpret_cast<CUstream>(stream)));
  CK(cudaEventSynchronize(done));
  CK(cudaMemcpy(c.data(), reinterpret_cast<void*>(dc), n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += c[i] != a[i] + b[i];
  EXPECT(bad == 0, "%d wrong sums from the driver launch on runtime memory", bad);
  printf("driver launch on runtime allocations: %d elements checked\n", n);

  std::vector<int> v(n), w(n, 0);
  for (int i = 0; i < n; ++i) v[i] = i - n / 2;
  CUdeviceptr dv;
  CU(cuMemAlloc(&dv, n * sizeof(int)));
  CU(cuMemcpyHtoD(dv, v.data(), n * sizeof(int)));
  negate<<<(n + 255) / 256, 256, 0, stream>>>(reinterpret_cast<int*>(dv), n);
  CK(cudaGetLastError());
  CU(cuStreamSynchronize(reinterpret_cast<CUstream>(stream)));
  CU(cuMemcpyDtoH(w.data(), dv, n * sizeof(int)));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += w[i] != -v[i];
  EXPECT(bad == 0, "%d wrong values from the runtime kernel on driver memory", bad);
  printf("runtime kernel on driver allocations: %d elements checked\n", n);

  CK(cudaEventDestroy(done));
  CK(cudaStreamDestroy(stream));
  CU(cuModuleUnload(module));
  CU(cuMemFree(dv));
  CU(cuMemFree(dc));
  CK(cudaFree(ra));
  CK(cudaFree(rb));
  CU(cuDevicePrimaryCtxRelease(0));
  return finish();
}
