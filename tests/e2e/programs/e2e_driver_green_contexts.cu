// Green contexts on the host-test backend, whose devices each have one SM
// resource of 132 SMs partitioned as compute capability 9.0 documents
// (at least 8, in multiples of 8): splits (counts, the remaining part, bad
// sizes), descriptors, green contexts and their streams (copies, memsets,
// launches, events), the green context made current, and bad handles.
#include <cstdint>
#include <vector>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  CUcontext primary;
  CU_OK(cuDevicePrimaryCtxRetain(&primary, 0));
  CU_OK(cuCtxSetCurrent(primary));
  if (g_failures) return finish();

  CUdevResource device{};
  CU_OK(cuDeviceGetDevResource(0, &device, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(device.type == CU_DEV_RESOURCE_TYPE_SM);
  CHECK(device.sm.smCount == 132 && device.sm.minSmPartitionSize == 8 && device.sm.smCoscheduledAlignment == 8);
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDeviceGetDevResource(0, &device, CU_DEV_RESOURCE_TYPE_INVALID));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetDevResource(99, &device, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource from_ctx{};
  CU_OK(cuCtxGetDevResource(nullptr, &from_ctx, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(from_ctx.sm.smCount == 132);

  // Counting only: 16 SMs a group (12 rounds up to the alignment of 8).
  unsigned groups = 0;
  CU_OK(cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, 0, 12));
  CHECK(groups == 8);
  CU_OK(cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, 0, 0));
  CHECK(groups == 16);
  CU_OK(cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 3));
  CHECK(groups == 33);

  // Two groups of 16 asked for; 100 SMs remain.
  CUdevResource parts[2] = {};
  CUdevResource rest{};
  groups = 2;
  CU_OK(cuDevSmResourceSplitByCount(parts, &groups, &device, &rest, 0, 16));
  CHECK(groups == 2);
  CHECK(parts[0].type == CU_DEV_RESOURCE_TYPE_SM && parts[0].sm.smCount == 16 && parts[1].sm.smCount == 16);
  CHECK(rest.type == CU_DEV_RESOURCE_TYPE_SM && rest.sm.smCount == 100);
  // More groups asked for than fit: as many as fit.
  std::vector<CUdevResource> many(40);
  groups = 40;
  CU_OK(cuDevSmResourceSplitByCount(many.data(), &groups, &device, nullptr, 0, 32));
  CHECK(groups == 4);

  // Bad splits.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, 0, 133));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, 0, 130));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(nullptr, nullptr, &device, nullptr, 0, 8));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(nullptr, &groups, &device, nullptr, 0x100, 8));
  groups = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(parts, &groups, &device, nullptr, 0, 8));
  CUdevResource blank{};
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDevSmResourceSplitByCount(nullptr, &groups, &blank, nullptr, 0, 8));
  CUdevResource forged = device;
  forged._internal_padding[12] ^= 0xff;  // not a resource rgpu handed out
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevSmResourceSplitByCount(nullptr, &groups, &forged, nullptr, 0, 8));
  // A split's output is not split again.
  groups = 1;
  CUdevResource again{};
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            cuDevSmResourceSplitByCount(&again, &groups, &parts[0], nullptr, 0, 8));

  // Descriptors: one group, or both groups and the rest of one split.
  CUdevResourceDesc desc = nullptr, desc_all = nullptr;
  CU_OK(cuDevResourceGenerateDesc(&desc, &parts[0], 1));
  CUdevResource all[3] = {parts[0], parts[1], rest};
  CU_OK(cuDevResourceGenerateDesc(&desc_all, all, 3));
  CUdevResource mixed[2] = {parts[0], many[0]};  // of two splits
  CUdevResourceDesc bad_desc;
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cuDevResourceGenerateDesc(&bad_desc, mixed, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(&bad_desc, parts, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevResourceGenerateDesc(nullptr, parts, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_RESOURCE_TYPE, cuDevResourceGenerateDesc(&bad_desc, &blank, 1));

  // Green contexts.
  CUgreenCtx green = nullptr, green_all = nullptr, bad_green;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGreenCtxCreate(&bad_green, desc, 0, 0));  // the default stream is required
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuGreenCtxCreate(&bad_green, reinterpret_cast<CUdevResourceDesc>(&groups), 0, CU_GREEN_CTX_DEFAULT_STREAM));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuGreenCtxCreate(&bad_green, desc, 99, CU_GREEN_CTX_DEFAULT_STREAM));
  CU_OK(cuGreenCtxCreate(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CU_OK(cuGreenCtxCreate(&green_all, desc_all, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CHECK(green && green_all && green != green_all);
  unsigned long long id = 0, id_all = 0;
  CU_OK(cuGreenCtxGetId(green, &id));
  CU_OK(cuGreenCtxGetId(green_all, &id_all));
  CHECK(id != id_all);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxGetId(nullptr, &id));  // no green context is current
  CUdevResource green_res{};
  CU_OK(cuGreenCtxGetDevResource(green, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(green_res.sm.smCount == 16);
  CU_OK(cuGreenCtxGetDevResource(green_all, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(green_res.sm.smCount == 132);
  // A green context's resources split again.
  CU_OK(cuGreenCtxGetDevResource(green, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CU_OK(cuDevSmResourceSplitByCount(nullptr, &groups, &green_res, nullptr, 0, 8));
  CHECK(groups == 2);
  int active = 0;
  unsigned flags = 0;
  CU_OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
  CHECK(active == 1);

  // A stream of the green context is an ordinary stream.
  CUstream gs = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGreenCtxStreamCreate(&gs, green, CU_STREAM_DEFAULT, 0));
  CU_OK(cuGreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
  CUgreenCtx of_stream = nullptr;
  CU_OK(cuStreamGetGreenCtx(gs, &of_stream));
  CHECK(of_stream == green);
  CUstream plain;
  CU_OK(cuStreamCreate(&plain, CU_STREAM_NON_BLOCKING));
  CU_OK(cuStreamGetGreenCtx(plain, &of_stream));
  CHECK(of_stream == nullptr);
  CU_OK(cuStreamGetGreenCtx(nullptr, &of_stream));
  CHECK(of_stream == nullptr);

  CUmodule module;
  CU_OK(cuModuleLoad(&module, RGPU_PTX_FILE));
  CUfunction vadd;
  CU_OK(cuModuleGetFunction(&vadd, module, "vadd"));
  const int n = 1000;
  CUdeviceptr a, b, c;
  CU_OK(cuMemAlloc(&a, n * sizeof(float)));
  CU_OK(cuMemAlloc(&b, n * sizeof(float)));
  CU_OK(cuMemAlloc(&c, n * sizeof(float)));
  std::vector<float> host(n, 2.5f), back(n);
  CU_OK(cuMemcpyHtoDAsync(a, host.data(), n * sizeof(float), gs));
  CU_OK(cuMemsetD32Async(b, 0x3f800000u, n, gs));  // 1.0f
  int count = n;
  void* args[] = {&a, &b, &c, &count};
  CU_OK(cuLaunchKernel(vadd, (n + 255) / 256, 1, 1, 256, 1, 1, 0, gs, args, nullptr));
  CUevent done;
  CU_OK(cuEventCreate(&done, 0));
  CU_OK(cuGreenCtxRecordEvent(green, done));
  CU_OK(cuEventSynchronize(done));
  CU_OK(cuGreenCtxWaitEvent(green_all, done));
  CU_OK(cuMemcpyDtoHAsync(back.data(), b, n * sizeof(float), gs));
  CU_OK(cuStreamSynchronize(gs));
  CHECK(back[0] == 1.0f && back[n - 1] == 1.0f);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxRecordEvent(green, reinterpret_cast<CUevent>(&id)));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuGreenCtxWaitEvent(green, reinterpret_cast<CUevent>(&id)));

  // The green context made current: its CUcontext works where a context does,
  // and the default stream's work runs in it.
  CUcontext gctx = nullptr;
  CU_OK(cuCtxFromGreenCtx(&gctx, green));
  CHECK(gctx != nullptr && gctx != primary);
  CUcontext gctx_again = nullptr;
  CU_OK(cuCtxFromGreenCtx(&gctx_again, green));
  CHECK(gctx_again == gctx);
  CU_OK(cuCtxSetCurrent(gctx));
  CUcontext now = nullptr;
  CU_OK(cuCtxGetCurrent(&now));
  CHECK(now == gctx);
  CUdevice dev = -1;
  CU_OK(cuCtxGetDevice(&dev));
  CHECK(dev == 0);
  CU_OK(cuCtxGetDevResource(nullptr, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(green_res.sm.smCount == 16);
  CU_OK(cuCtxGetDevResource(gctx, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(green_res.sm.smCount == 16);
  CU_OK(cuCtxGetDevResource(primary, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(green_res.sm.smCount == 132);
  CU_OK(cuGreenCtxGetId(nullptr, &id_all));
  CHECK(id_all == id);
  CU_OK(cuStreamGetGreenCtx(nullptr, &of_stream));
  CHECK(of_stream == green);
  CU_OK(cuLaunchKernel(vadd, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_OK(cuMemsetD32(c, 0x40000000u, n));  // 2.0f
  CU_OK(cuMemcpyDtoH(back.data(), c, n * sizeof(float)));
  CHECK(back[0] == 2.0f && back[n - 1] == 2.0f);
  // A stream made while the green context is current is of it.
  CUstream made_in_green;
  CU_OK(cuStreamCreate(&made_in_green, CU_STREAM_DEFAULT));
  CU_OK(cuStreamGetGreenCtx(made_in_green, &of_stream));
  CHECK(of_stream == green);
  CUcontext stream_ctx = nullptr;
  CU_OK(cuStreamGetCtx(made_in_green, &stream_ctx));
  CHECK(stream_ctx == gctx);
  CUgreenCtx green_of_v2 = nullptr;
  CU_OK(cuStreamGetCtx_v2(gs, &stream_ctx, &green_of_v2));
  CHECK(stream_ctx == primary && green_of_v2 == green);
  CU_OK(cuStreamDestroy(made_in_green));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuCtxPushCurrent(primary));
  CU_OK(cuCtxGetCurrent(&now));
  CHECK(now == primary);
  CUcontext popped = nullptr;
  CU_OK(cuCtxPopCurrent(&popped));
  CHECK(popped == primary);
  CU_OK(cuCtxGetCurrent(&now));
  CHECK(now == gctx);
  CU_OK(cuCtxSetCurrent(primary));
  CU_OK(cuCtxGetCurrent(&now));
  CHECK(now == primary);

  // Destroyed: its handles are no longer valid.
  CU_OK(cuStreamDestroy(gs));
  CU_OK(cuStreamDestroy(plain));
  CU_OK(cuGreenCtxDestroy(green));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxDestroy(green));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxGetId(green, &id));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxFromGreenCtx(&gctx, green));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxGetDevResource(green, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSetCurrent(gctx));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuGreenCtxRecordEvent(green, done));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxFromGreenCtx(nullptr, green_all));
  CU_OK(cuGreenCtxDestroy(green_all));
  CU_OK(cuEventDestroy(done));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  CU_OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
  CHECK(active == 0);
  return finish();
}
