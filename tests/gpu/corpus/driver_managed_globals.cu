// A module's managed globals reached from the host, as NVIDIA's uvmlite
// sample does with its libNVVM module: the host reads the values the module
// initialised, changes them, a kernel changes them again (one through a
// pointer argument, one by name), and the host reads the kernel's results.
// Then host writes are what copies read, and copies and memsets are what
// the host reads.
#include <cstring>

#include "driver_corpus.h"
#include "managed_globals_ptx.h"

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  int managed_memory = 0, unified = 0;
  CU(cuDeviceGetAttribute(&managed_memory, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev));
  CU(cuDeviceGetAttribute(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev));
  printf("managed memory %d, unified addressing %d\n", managed_memory, unified);
  CUcontext ctx;
  CU(cuCtxCreate(&ctx, nullptr, 0, dev));
  CUmodule module;
  CU(cuModuleLoadDataEx(&module, kManagedGlobalsPtx, 0, nullptr, nullptr));
  CUfunction accumulate;
  CU(cuModuleGetFunction(&accumulate, module, "accumulate"));

  CUdeviceptr hits_d, sum_d, scratch_d;
  size_t hits_size, sum_size, scratch_size;
  CU(cuModuleGetGlobal(&hits_d, &hits_size, module, "hits"));
  CU(cuModuleGetGlobal(&sum_d, &sum_size, module, "sum"));
  CU(cuModuleGetGlobal(&scratch_d, &scratch_size, module, "scratch"));
  printf("sizes: hits %zu, sum %zu, scratch %zu\n", hits_size, sum_size, scratch_size);

  unsigned hits_managed = 0, sum_managed = 0, scratch_managed = 1;
  CU(cuPointerGetAttribute(&hits_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, hits_d));
  CU(cuPointerGetAttribute(&sum_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, sum_d));
  CU(cuPointerGetAttribute(&scratch_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, scratch_d));
  printf("managed: hits %u, sum %u, scratch %u\n", hits_managed, sum_managed, scratch_managed);
  EXPECT(hits_managed == 1 && sum_managed == 1 && scratch_managed == 0, "IS_MANAGED");

  void* hits_host = nullptr;
  void* sum_host = nullptr;
  CU(cuPointerGetAttribute(&hits_host, CU_POINTER_ATTRIBUTE_HOST_POINTER, hits_d));
  CU(cuPointerGetAttribute(&sum_host, CU_POINTER_ATTRIBUTE_HOST_POINTER, sum_d));
  EXPECT(hits_host == reinterpret_cast<void*>(hits_d) && sum_host == reinterpret_cast<void*>(sum_d),
         "a managed global's host pointer is its device address");
  auto* hits = static_cast<unsigned*>(hits_host);
  auto* sum = static_cast<unsigned long long*>(sum_host);

  printf("initialised by the module: hits %u, sum %llu\n", *hits, *sum);
  EXPECT(*hits == 7 && *sum == 1000, "initial values");
  *hits += 3;
  *sum += 5;

  unsigned amount = 20;
  void* params[] = {&hits_d, &amount};
  CU(cuLaunchKernel(accumulate, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CU(cuCtxSynchronize());
  unsigned scratch = 0;
  CU(cuMemcpyDtoH(&scratch, scratch_d, sizeof scratch));
  printf("after the kernel: hits %u, sum %llu, scratch %u\n", *hits, *sum, scratch);
  EXPECT(*hits == 30 && *sum == 1025 && scratch == 30, "the kernel saw the host's writes, the host the kernel's");

  *hits = 41;
  unsigned copied = 0;
  CU(cuMemcpyDtoH(&copied, hits_d, sizeof copied));
  unsigned long long sixty = 60;
  CU(cuMemcpyHtoD(sum_d, &sixty, sizeof sixty));
  printf("copied from hits %u, sum after a copy to it %llu\n", copied, *sum);
  EXPECT(copied == 41 && *sum == 60, "copies and host accesses agree");
  CU(cuMemsetD32(hits_d, 9, 1));
  CU(cuCtxSynchronize());
  printf("hits after a memset %u\n", *hits);
  EXPECT(*hits == 9, "memset");

  CU(cuModuleUnload(module));
  CU(cuCtxDestroy(ctx));
  return finish();
}
