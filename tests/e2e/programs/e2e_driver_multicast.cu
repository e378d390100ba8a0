// Driver API multicast objects on a server whose GPUs no NVLink switch joins
// (the test backend's): creation and granularity return what the driver
// says there, CUDA_ERROR_NOT_SUPPORTED, and every call refuses handles that
// are not multicast objects (or allocations) of the application.
#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  CUmulticastObjectProp prop{};
  prop.numDevices = 1;
  prop.size = 2 << 20;
  prop.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  size_t g = 0;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMulticastGetGranularity(&g, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastGetGranularity(nullptr, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastGetGranularity(&g, nullptr, CU_MULTICAST_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle mc = 0;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMulticastCreate(&mc, &prop));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastCreate(nullptr, &prop));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastCreate(&mc, nullptr));

  // A physical allocation is no multicast object, and a multicast call
  // binds only allocations the application holds.
  CUmemAllocationProp aprop{};
  aprop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  aprop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  aprop.location.id = 0;
  CU_OK(cuMemGetAllocationGranularity(&g, &aprop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle mem = 0;
  CU_OK(cuMemCreate(&mem, g, &aprop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastAddDevice(mem, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastBindMem(mem, 0, mem, 0, g, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastUnbind(mem, 0, 0, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastBindMem(0x1234, 0, mem, 0, g, 0));
  CUdeviceptr d = 0;
  CU_OK(cuMemAlloc(&d, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastBindAddr(mem, 0, d, g, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMulticastBindAddr(0x1234, 0, d, g, 0));
  CU_OK(cuMemFree(d));
  CU_OK(cuMemRelease(mem));
  // Released: the handle names nothing.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(mem));
  return finish();
}
