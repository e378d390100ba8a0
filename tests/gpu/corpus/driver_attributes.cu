// Driver calls whose answers depend on the GPU's driver and machine: the
// multicast granularity and objects (CUDA_ERROR_NOT_SUPPORTED without an
// NVLink switch), coredump settings set and read back, cuDeviceGetLuid,
// cuProfilerInitialize, and pointer attributes in the array form. Results
// are printed by name so a local run and one through rgpu compare.
#include <cudaProfiler.h>

#include <cstring>

#include "driver_corpus.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuProfilerInitialize, on purpose

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));

  int mc_supported = -1;
  CUresult r = cuDeviceGetAttribute(&mc_supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev);
  printf("multicast supported: %s %d\n", cu_error_name(r), mc_supported);
  CUmulticastObjectProp prop{};
  prop.numDevices = 1;
  prop.size = 2 << 20;
  prop.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  size_t g = 0;
  r = cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_RECOMMENDED);
  printf("multicast granularity: %s", cu_error_name(r));
  if (r == CUDA_SUCCESS) printf(" %zu", g);
  printf("\n");
  CUmemGenericAllocationHandle mc = 0;
  r = cuMulticastCreate(&mc, &prop);
  printf("multicast create: %s\n", cu_error_name(r));
  if (r == CUDA_SUCCESS) {
    printf("multicast add device 0: %s\n", cu_error_name(cuMulticastAddDevice(mc, dev)));
    CU(cuMemRelease(mc));
  }

  size_t size = 0;
  r = cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &size);
  printf("coredump enable-on-exception: %s, %zu bytes\n", cu_error_name(r), size);
  bool on = false;
  size = sizeof on;
  r = cuCoredumpGetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size);
  printf("  global: %s %d\n", cu_error_name(r), int(on));
  on = true;
  r = cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size);
  printf("  set global: %s\n", cu_error_name(r));
  on = false;
  r = cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size);
  printf("  context: %s %d\n", cu_error_name(r), int(on));
  int flags = CU_COREDUMP_SKIP_ABORT | CU_COREDUMP_SKIP_LOCAL_MEMORY;
  size = sizeof flags;
  r = cuCoredumpSetAttribute(CU_COREDUMP_GENERATION_FLAGS, &flags, &size);
  flags = -1;
  CUresult r2 = cuCoredumpGetAttribute(CU_COREDUMP_GENERATION_FLAGS, &flags, &size);
  printf("coredump generation flags: set %s, get %s, 0x%x\n", cu_error_name(r), cu_error_name(r2), flags);
  char path[] = "/tmp/rgpu-corpus-core";
  size = sizeof path;
  r = cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, path, &size);
  char got[1024] = {};
  size = sizeof got;
  r2 = cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, got, &size);
  printf("coredump file: set %s, get %s, %s\n", cu_error_name(r), cu_error_name(r2),
         r2 == CUDA_SUCCESS && strcmp(got, path) == 0 ? "same path" : "other path");
  on = false;  // leave the process as it was
  size = sizeof on;
  CU(cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &size));

  char luid[8];
  unsigned mask = 0;
  printf("device LUID: %s\n", cu_error_name(cuDeviceGetLuid(luid, &mask, dev)));
  printf("profiler initialize: %s\n", cu_error_name(cuProfilerInitialize("none.cfg", "none.out", CU_OUT_CSV)));

  float* d;
  CK(cudaMalloc(&d, 1 << 16));
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED};
  CUmemorytype type = CUmemorytype(0);
  int ordinal = -1;
  size_t range = 0;
  void* host = &ordinal;
  bool managed = true;
  void* data[] = {&type, &ordinal, &range, &host, &managed};
  CU(cuPointerGetAttributes(5, attrs, data, reinterpret_cast<CUdeviceptr>(d + 100)));
  printf("device memory: type %d, device %d, %zu bytes, host pointer %s, managed %d\n", int(type), ordinal, range,
         host ? "set" : "null", int(managed));
  static int word;
  CU(cuPointerGetAttributes(5, attrs, data, reinterpret_cast<CUdeviceptr>(&word)));
  // Its range and host pointer are the GPU host's view of its own pageable
  // memory (HMM), which the application's memory is not through rgpu.
  printf("unknown memory: type %d, device %d, managed %d\n", int(type), ordinal, int(managed));
  unsigned one = 1;
  printf("sync memops: %s\n",
         cu_error_name(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, reinterpret_cast<CUdeviceptr>(d))));
  CK(cudaFree(d));
  return finish();
}
