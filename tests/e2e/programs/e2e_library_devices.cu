// Libraries are not bound to a device: loaded on device 0, their kernels
// launch on device 1 too (loaded there at first use), with attributes per
// device, and each device has its own copy of their variables; a driver
// module's kernel stays in its own context.
#include <fstream>
#include <iterator>
#include <string>

#include "driver_check.h"

int main() {
  std::ifstream in(RGPU_PTX_FILE);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The kernels' PTX with a variable added.
  ptx.insert(ptx.find(".address_size 64") + 16, "\n.visible .global .align 4 .u32 counter;\n");
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);

  OK(cudaSetDevice(0));
  cudaLibrary_t lib;
  OK(cudaLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t vadd;
  OK(cudaLibraryGetKernel(&vadd, lib, "vadd"));

  const int n = 256;
  float* buffers[2][3];
  int nn = n;
  for (int d = 0; d < 2; ++d) {
    OK(cudaSetDevice(d));
    for (float*& b : buffers[d]) OK(cudaMalloc(&b, n * sizeof(float)));
  }
  void* args1[] = {&buffers[1][0], &buffers[1][1], &buffers[1][2], &nn};
  OK(cudaSetDevice(1));
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args1, 0, nullptr));
  cudaFuncAttributes attr;
  OK(cudaFuncGetAttributes(&attr, reinterpret_cast<void*>(vadd)));
  OK(cudaKernelSetAttributeForDevice(vadd, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024, 1));
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args1, 64 * 1024, nullptr));
  OK(cudaDeviceSynchronize());
  // The raised limit is device 1's only.
  OK(cudaSetDevice(0));
  void* args0[] = {&buffers[0][0], &buffers[0][1], &buffers[0][2], &nn};
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args0, 64 * 1024, nullptr));
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args0, 0, nullptr));
  OK(cudaDeviceSynchronize());

  // A library's variable is each device's own.
  void* on_device[2] = {};
  for (int d = 0; d < 2; ++d) {
    OK(cudaSetDevice(d));
    size_t bytes = 0;
    OK(cudaLibraryGetGlobal(&on_device[d], &bytes, lib, "counter"));
    cudaPointerAttributes where;
    OK(cudaPointerGetAttributes(&where, on_device[d]));
    CHECK(where.type == cudaMemoryTypeDevice && where.device == d);
  }
  CHECK(on_device[0] != on_device[1]);
  OK(cudaSetDevice(0));

  // The driver: a library's CUkernel runs in device 1's context, a module's
  // CUfunction does not.
  CU_OK(cuInit(0));
  CUlibrary library;
  CU_OK(cuLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel;
  CU_OK(cuLibraryGetKernel(&kernel, library, "vadd"));
  CUmodule module;
  CU_OK(cuModuleLoadData(&module, ptx.c_str()));
  CUfunction function;
  CU_OK(cuModuleGetFunction(&function, module, "vadd"));
  CUdevice dev1;
  CU_OK(cuDeviceGet(&dev1, 1));
  CUcontext ctx1;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx1, dev1));
  CU_OK(cuCtxSetCurrent(ctx1));
  CU_OK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), 2, 1, 1, 128, 1, 1, 0, nullptr, args1, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuLaunchKernel(function, 2, 1, 1, 128, 1, 1, 0, nullptr, args1, nullptr));
  int regs = -1;
  CU_OK(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel, dev1));
  CHECK(regs >= 0);
  CU_OK(cuCtxSynchronize());
  CU_OK(cuLibraryUnload(library));
  OK(cudaLibraryUnload(lib));
  for (auto& device_buffers : buffers)
    for (float* b : device_buffers) OK(cudaFree(b));
  return finish();
}
