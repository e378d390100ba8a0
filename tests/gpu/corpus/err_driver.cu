// Driver API errors whose CUresult must be the same from NVIDIA's driver and
// through rgpu; after them the context still works.
#include <cstring>
#include <vector>

#include "driver_corpus.h"
#include "driver_kernels_ptx.h"

static void report(const char* what, CUresult e) { printf("%s: %s\n", what, cu_error_name(e)); }

int main() {
  CUdevice dev;
  report("cuDeviceGet before cuInit", cuDeviceGet(&dev, 0));
  report("cuInit(1)", cuInit(1));
  CU(cuInit(0));
  report("cuDeviceGet(4096)", cuDeviceGet(&dev, 4096));
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));

  CUmodule module;
  static const char garbage[] = "this is neither PTX nor a cubin nor a fat binary";
  report("cuModuleLoadData(garbage)", cuModuleLoadData(&module, garbage));
  report("cuModuleLoad(missing file)", cuModuleLoad(&module, "/nonexistent/rgpu/kernels.ptx"));
  CU(cuModuleLoadData(&module, kDriverKernelsPtx));
  CUfunction f;
  report("cuModuleGetFunction(unknown name)", cuModuleGetFunction(&f, module, "no_such_kernel"));
  CU(cuModuleGetFunction(&f, module, "vadd"));
  report("cuMemAlloc(0 bytes)", [] {
    CUdeviceptr p;
    return cuMemAlloc(&p, 0);
  }());
  const char* s = nullptr;
  report("cuGetErrorName(12345)", cuGetErrorName(static_cast<CUresult>(12345), &s));
  // A parameter buffer longer or shorter than the kernel's parameters.
  {
    CUdeviceptr p = 0;
    unsigned char buffer[64] = {};
    std::memcpy(buffer, &p, sizeof p);
    for (size_t size : {size_t{40}, size_t{64}, size_t{8}}) {
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
      printf("parameter buffer of %zu bytes for 28: %s\n", size,
             cu_error_name(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra)));
    }
  }

  // Still working: a launch whose result is checked.
  const int n = 4096;
  std::vector<float> a(n, 1.5f), c(n, 0.f);
  CUdeviceptr da, dc;
  CU(cuMemAlloc(&da, n * sizeof(float)));
  CU(cuMemAlloc(&dc, n * sizeof(float)));
  CU(cuMemcpyHtoD(da, a.data(), n * sizeof(float)));
  int nn = n;
  void* args[] = {&da, &da, &dc, &nn};
  CU(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU(cuMemcpyDtoH(c.data(), dc, n * sizeof(float)));
  int bad = 0;
  for (float x : c) bad += x != 3.0f;
  EXPECT(bad == 0, "%d wrong sums after the errors", bad);
  CU(cuMemFree(da));
  CU(cuMemFree(dc));
  CU(cuModuleUnload(module));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
