// A PTX module's managed globals through the driver API (NVIDIA's uvmlite
// does this): cuModuleGetGlobal gives an address the host reads and writes
// in place, coherent with copies, memsets and launches, over every
// transport. The host-test backend zero-fills module variables and runs no
// kernel, so the values checked are the host's and the copies'.
#include <cstring>

#include "driver_check.h"
#include "managed_globals_ptx.h"

int main() {
  CU_OK(cuInit(0));
  CUdevice dev;
  CU_OK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CUmodule module;
  CU_OK(cuModuleLoadDataEx(&module, kManagedGlobalsPtx, 0, nullptr, nullptr));
  CUfunction accumulate;
  CU_OK(cuModuleGetFunction(&accumulate, module, "accumulate"));
  CUdeviceptr hits_d = 0, sum_d = 0, scratch_d = 0;
  size_t hits_size = 0, sum_size = 0;
  CU_OK(cuModuleGetGlobal(&hits_d, &hits_size, module, "hits"));
  CU_OK(cuModuleGetGlobal(&sum_d, &sum_size, module, "sum"));
  CU_OK(cuModuleGetGlobal(&scratch_d, nullptr, module, "scratch"));
  CHECK(hits_size == 4 && sum_size == 8);

  unsigned managed = 0;
  CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, hits_d));
  CHECK(managed == 1);
  CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, sum_d));
  CHECK(managed == 1);
  CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, scratch_d));
  CHECK(managed == 0);
  void* host = nullptr;
  CU_OK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, hits_d));
  CHECK(host == reinterpret_cast<void*>(hits_d));
  auto* hits = reinterpret_cast<unsigned*>(hits_d);
  auto* sum = reinterpret_cast<unsigned long long*>(sum_d);

  // The host's writes (two variables, one page) are what the device has.
  *hits = 10;
  *sum = 100;
  unsigned hits_copy = 0;
  unsigned long long sum_copy = 0;
  CU_OK(cuMemcpyDtoH(&hits_copy, hits_d, sizeof hits_copy));
  CU_OK(cuMemcpyDtoH(&sum_copy, sum_d, sizeof sum_copy));
  CHECK(hits_copy == 10 && sum_copy == 100);
  // The device's changes are what the host reads next.
  unsigned long long thousand = 1000;
  CU_OK(cuMemcpyHtoD(sum_d, &thousand, sizeof thousand));
  CHECK(*sum == 1000 && *hits == 10);
  CU_OK(cuMemsetD32(hits_d, 9, 1));
  CU_OK(cuCtxSynchronize());
  CHECK(*hits == 9);
  // A launch naming it, and a device-to-device copy from it.
  *hits += 1;
  unsigned amount = 20;
  void* params[] = {&hits_d, &amount};
  CU_OK(cuLaunchKernel(accumulate, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuMemcpyDtoD(scratch_d, hits_d, sizeof(unsigned)));
  unsigned scratch = 0;
  CU_OK(cuMemcpyDtoH(&scratch, scratch_d, sizeof scratch));
  CHECK(scratch == 10);
  // Unified addressing: cuMemcpy tells its side by the address.
  CU_OK(cuMemcpy(reinterpret_cast<CUdeviceptr>(&hits_copy), hits_d, sizeof hits_copy));
  CHECK(hits_copy == 10);

  // Asked again: the same variable; a second module's are its own.
  CUdeviceptr again = 0;
  CU_OK(cuModuleGetGlobal(&again, nullptr, module, "hits"));
  CHECK(again == hits_d && *hits == 10);
  CUmodule second;
  CU_OK(cuModuleLoadDataEx(&second, kManagedGlobalsPtx, 0, nullptr, nullptr));
  CUdeviceptr other = 0;
  CU_OK(cuModuleGetGlobal(&other, nullptr, second, "hits"));
  CHECK(other != hits_d);
  *reinterpret_cast<unsigned*>(other) = 55;
  CU_OK(cuMemcpyDtoH(&hits_copy, other, sizeof hits_copy));
  CHECK(hits_copy == 55 && *hits == 10);

  CU_OK(cuModuleUnload(module));
  CHECK(*reinterpret_cast<unsigned*>(other) == 55);
  CU_OK(cuModuleUnload(second));
  CU_OK(cuCtxDestroy(ctx));
  return finish();
}
