// Driver API errors: each bad call gets the CUresult NVIDIA's driver gives,
// and the session keeps serving afterwards.
#include <unistd.h>

#include <string>
#include <vector>

#include "driver_check.h"

int main() {
  CUdevice dev;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGet(&dev, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(1));
  CU_OK(cuInit(0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&dev, 4096));
  CU_OK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_OK(cuCtxSetCurrent(ctx));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetCurrent(reinterpret_cast<CUcontext>(&dev)));

  // Garbage is no module image.
  CUmodule module;
  const char garbage[] = "this is neither PTX nor a cubin nor a fat binary";
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&module, garbage));
  EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&module, "/nonexistent/kernels.ptx"));

  // Bogus and stale handles.
  CUfunction f;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(&dev), "vadd"));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cuLaunchKernel(reinterpret_cast<CUfunction>(&dev), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_OK(cuModuleLoad(&module, RGPU_PTX_FILE));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, module, "no_such_kernel"));
  CU_OK(cuModuleGetFunction(&f, module, "vadd"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 4096, 1, 1, 0, nullptr, nullptr, nullptr));
  CU_OK(cuModuleUnload(module));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(module));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));

  // Memory the session does not own.
  CUdeviceptr p;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&p, 0));
  CU_OK(cuMemAlloc(&p, 64));
  std::vector<char> host(128);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(p, host.data(), 128));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 8));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 2, 1, 4));

  const char* text = nullptr;
  CU_OK(cuGetErrorName(CUDA_ERROR_INVALID_IMAGE, &text));
  CHECK(std::string(text) == "CUDA_ERROR_INVALID_IMAGE");
  CU_OK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text));
  CHECK(text && *text);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetErrorName(static_cast<CUresult>(12345), &text));
  // A function rgpu does not offer says so.
  CUprocessState state;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuCheckpointProcessGetState(static_cast<int>(getpid()), &state));

  // Still serving.
  CU_OK(cuMemcpyHtoD(p, host.data(), 64));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuMemFree(p));
  CU_OK(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
