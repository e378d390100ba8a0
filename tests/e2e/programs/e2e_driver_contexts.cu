// Driver contexts and devices: created contexts (the primary one), the
// per-thread push/pop stack, context queries forwarded to the server's
// context, the legacy exports bound to their newer versions, and bad handles.
#include <cudaProfiler.h>

#include "driver_check.h"

// Legacy exports, which cuda.h maps to newer names for applications.
#undef cuDeviceTotalMem
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
extern "C" CUresult CUDAAPI cuDeviceTotalMem(unsigned int* bytes, CUdevice dev);
extern "C" CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);
extern "C" CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx);
extern "C" CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx);
// Exported, but declared only for the driver's own build.
extern "C" CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                           unsigned int flags, CUdevice dev);

int main() {
  CU_OK(cuInit(0));
  CUcontext ctx = nullptr;
  CU_OK(cuCtxCreate(&ctx, nullptr, 0, 0));
  // Empty creation parameters ask for nothing (NVIDIA's samples pass them);
  // execution affinity would need a context of its own.
  CUctxCreateParams none = {};
  CUcontext same = nullptr;
  CU_OK(cuCtxCreate(&same, &none, 0, 0));
  CHECK(same == ctx);
  CU_OK(cuCtxDestroy(same));
  CUexecAffinityParam sm_limit{};
  sm_limit.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  sm_limit.param.smCount.val = 8;
  CUctxCreateParams with_affinity = {&sm_limit, 1, nullptr};
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuCtxCreate(&same, &with_affinity, 0, 0));
  CUcontext current = nullptr;
  CU_OK(cuCtxGetCurrent(&current));
  CHECK(current == ctx);
  unsigned version = 0;
  CU_OK(cuCtxGetApiVersion(ctx, &version));
  CHECK(version >= 3020);
  unsigned long long id = 0, id_current = 0;
  CU_OK(cuCtxGetId(ctx, &id));
  CU_OK(cuCtxGetId(nullptr, &id_current));
  CHECK(id != 0 && id == id_current);
  CUdevice dev = -1;
  CU_OK(cuCtxGetDevice_v2(&dev, ctx));
  CHECK(dev == 0);
  CU_OK(cuCtxSynchronize_v2(ctx));
  CU_OK(cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC));
  unsigned flags = 0;
  CU_OK(cuCtxGetFlags(&flags));
  CHECK((flags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC);
  CUsharedconfig config;
  CU_OK(cuCtxGetSharedMemConfig(&config));
  CU_OK(cuCtxSetSharedMemConfig(config));
  CUexecAffinityParam affinity{};
  CU_OK(cuCtxGetExecAffinity(&affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
  int sms = 0;
  CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  CHECK(affinity.type == CU_EXEC_AFFINITY_TYPE_SM_COUNT && static_cast<int>(affinity.param.smCount.val) == sms);

  // Events recorded for, and awaited by, the whole context.
  CUevent event;
  CU_OK(cuEventCreate(&event, 0));
  CU_OK(cuCtxRecordEvent(ctx, event));
  CU_OK(cuCtxWaitEvent(nullptr, event));
  CU_OK(cuEventSynchronize(event));

  // The per-thread stack, with the legacy names too.
  CUcontext popped = nullptr;
  CU_OK(cuCtxPushCurrent(ctx));
  CU_OK(cuCtxPopCurrent(&popped));
  CHECK(popped == ctx);
  CUcontext attached = nullptr;
  CU_OK(cuCtxAttach(&attached, 0));
  CHECK(attached == ctx);
  CU_OK(cuCtxDetach(attached));

  // Streams know their device and context.
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUcontext stream_ctx = nullptr;
  CU_OK(cuStreamGetCtx(stream, &stream_ctx));
  CHECK(stream_ctx == ctx);
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(1);
  CU_OK(cuStreamGetCtx_v2(stream, &stream_ctx, &green));
  CHECK(stream_ctx == ctx && green == nullptr);
  CUdevice stream_dev = -1;
  CU_OK(cuStreamGetDevice(stream, &stream_dev));
  CHECK(stream_dev == 0);
  CU_OK(cuStreamDestroy(stream));

  // Devices: by PCI bus id, legacy properties and sizes.
  char bus_id[32];
  CU_OK(cuDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
  CUdevice by_bus = -1;
  CU_OK(cuDeviceGetByPCIBusId(&by_bus, bus_id));
  CHECK(by_bus == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&by_bus, "not a bus id"));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetByPCIBusId(&by_bus, "7777:ee:1f.7"));
  CUdevprop prop;
  CU_OK(cuDeviceGetProperties(&prop, 0));
  int max_threads = 0;
  CU_OK(cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
  CHECK(prop.maxThreadsPerBlock == max_threads);
  size_t total = 0;
  CU_OK(cuDeviceTotalMem_v2(&total, 0));
  unsigned total32 = 0;
  // The legacy 32-bit size: the value when it fits, else an error.
  EXPECT_CU(total <= 0xffffffffu ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED, cuDeviceTotalMem(&total32, 0));
  CHECK(total > 0xffffffffu || total32 == total);
  int affinity_supported = -1;
  CU_OK(cuDeviceGetExecAffinitySupport(&affinity_supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
  CHECK(affinity_supported == 0 || affinity_supported == 1);
  size_t width = 0;
  CU_OK(cuDeviceGetTexture1DLinearMaxWidth(&width, CU_AD_FORMAT_FLOAT, 1, 0));
  CHECK(width > 0);
  CUmoduleLoadingMode mode;
  CU_OK(cuModuleGetLoadingMode(&mode));
  CHECK(mode == CU_MODULE_EAGER_LOADING || mode == CU_MODULE_LAZY_LOADING);
  CU_OK(cuProfilerStart());
  CU_OK(cuProfilerStop());
  CU_OK(cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                   CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));

  // Bad handles and arguments.
  CUcontext bogus = reinterpret_cast<CUcontext>(&config);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetApiVersion(bogus, &version));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetDevice_v2(&dev, bogus));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize_v2(bogus));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxRecordEvent(bogus, event));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuCtxRecordEvent(ctx, reinterpret_cast<CUevent>(&config)));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxGetFlags(nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetProperties(&prop, 99));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxAttach(&attached, 1));
  CUexecAffinityParam one_sm{CU_EXEC_AFFINITY_TYPE_SM_COUNT, {{1}}};
  CUcontext affine = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuCtxCreate_v3(&affine, &one_sm, 1, 0, 0));

  CU_OK(cuEventDestroy(event));
  CU_OK(cuCtxDestroy(ctx));
  return finish();
}
