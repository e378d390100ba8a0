// Green contexts: the device's SMs split into groups of 16, a green context
// made of one group, and kernels on a stream of it and on its default stream
// (the green context made current) that record the SM (%smid) each block ran
// on. Every block must have run, on no more distinct SMs than the group has.
#include <set>
#include <vector>

#include "driver_corpus.h"

__global__ void record_sm(unsigned* sm_of_block, unsigned* blocks) {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) {
    sm_of_block[blockIdx.x] = sm;
    atomicAdd(blocks, 1u);
  }
  // Keep the block resident a while so the scheduler spreads blocks out.
  long long start = clock64();
  while (clock64() - start < 20000) {
  }
}

// Runs record_sm on `stream` and checks the SMs it used.
static void check_partition(const char* where, cudaStream_t stream, unsigned group_sms, int sm_total) {
  const int grid = 4 * sm_total;
  unsigned *sm_of_block, *blocks;
  CK(cudaMalloc(&sm_of_block, grid * sizeof(unsigned)));
  CK(cudaMalloc(&blocks, sizeof(unsigned)));
  CK(cudaMemsetAsync(blocks, 0, sizeof(unsigned), stream));
  record_sm<<<grid, 128, 0, stream>>>(sm_of_block, blocks);
  CK(cudaGetLastError());
  std::vector<unsigned> sms(grid);
  unsigned counted = 0;
  CK(cudaMemcpyAsync(sms.data(), sm_of_block, grid * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CK(cudaMemcpyAsync(&counted, blocks, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  std::set<unsigned> used(sms.begin(), sms.end());
  bool in_range = *used.rbegin() < static_cast<unsigned>(sm_total);
  printf("%s: blocks run %s, distinct SMs used <= %u: %s, SM ids valid: %s\n", where,
         counted == static_cast<unsigned>(grid) ? "all" : "NOT all", group_sms, used.size() <= group_sms ? "yes" : "no",
         in_range ? "yes" : "no");
  EXPECT(counted == static_cast<unsigned>(grid), "%u of %d blocks ran", counted, grid);
  EXPECT(used.size() <= group_sms, "%zu SMs used by a green context of %u", used.size(), group_sms);
  EXPECT(in_range, "an SM id out of range");
  CK(cudaFree(sm_of_block));
  CK(cudaFree(blocks));
}

int main() {
  CU(cuInit(0));
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  int sm_total = 0;
  CU(cuDeviceGetAttribute(&sm_total, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

  CUdevResource device{};
  CU(cuDeviceGetDevResource(dev, &device, CU_DEV_RESOURCE_TYPE_SM));
  printf("device resource: SM type %s, SM count matches the device: %s\n",
         device.type == CU_DEV_RESOURCE_TYPE_SM ? "yes" : "no",
         device.sm.smCount == static_cast<unsigned>(sm_total) ? "yes" : "no");

  const unsigned min_count = 16;
  unsigned possible = 0;
  CU(cuDevSmResourceSplitByCount(nullptr, &possible, &device, nullptr, 0, min_count));
  CUdevResource groups[2] = {};
  CUdevResource rest{};
  unsigned made = 2;
  CU(cuDevSmResourceSplitByCount(groups, &made, &device, &rest, 0, min_count));
  printf("split by %u: groups made %u, group SMs %u %u, counted groups >= made: %s\n", min_count, made,
         groups[0].sm.smCount, groups[1].sm.smCount, possible >= made ? "yes" : "no");
  EXPECT(made == 2 && groups[0].sm.smCount == min_count, "split gave %u groups of %u", made, groups[0].sm.smCount);
  EXPECT(rest.sm.smCount == device.sm.smCount - made * min_count, "remaining %u SMs", rest.sm.smCount);
  printf("remaining SMs = total - groups: %s\n", rest.sm.smCount == device.sm.smCount - made * min_count ? "yes" : "no");
  unsigned none = 1;
  CUdevResource unused{};
  CUresult too_big = cuDevSmResourceSplitByCount(&unused, &none, &device, nullptr, 0, device.sm.smCount + 1);
  printf("split by more SMs than the device has refused: %s\n", too_big != CUDA_SUCCESS ? "yes" : "no");

  CUdevResourceDesc desc;
  CU(cuDevResourceGenerateDesc(&desc, &groups[0], 1));
  CUgreenCtx green;
  CU(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUdevResource green_res{};
  CU(cuGreenCtxGetDevResource(green, &green_res, CU_DEV_RESOURCE_TYPE_SM));
  printf("green context SMs: %u\n", green_res.sm.smCount);

  CUstream gs;
  CU(cuGreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
  CUgreenCtx of_stream = nullptr;
  CU(cuStreamGetGreenCtx(gs, &of_stream));
  printf("stream's green context round trip: %s\n", of_stream == green ? "yes" : "no");
  EXPECT(of_stream == green, "cuStreamGetGreenCtx gave another context");

  CUcontext gctx;
  CU(cuCtxFromGreenCtx(&gctx, green));
  CU(cuCtxSetCurrent(gctx));
  CUdevResource ctx_res{};
  CU(cuCtxGetDevResource(gctx, &ctx_res, CU_DEV_RESOURCE_TYPE_SM));
  printf("context of the green context SMs: %u\n", ctx_res.sm.smCount);
  check_partition("green stream", reinterpret_cast<cudaStream_t>(gs), green_res.sm.smCount, sm_total);
  check_partition("green default stream", nullptr, green_res.sm.smCount, sm_total);

  CUevent done;
  CU(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  CU(cuGreenCtxRecordEvent(green, done));
  CU(cuEventSynchronize(done));
  CU(cuEventDestroy(done));
  CU(cuCtxSynchronize());

  CUcontext primary;
  CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CU(cuCtxSetCurrent(primary));
  CU(cuStreamDestroy(gs));
  CU(cuGreenCtxDestroy(green));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
