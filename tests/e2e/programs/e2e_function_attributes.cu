// Kernel attribute and occupancy queries answered by the client once it
// knows them (FunctionAttributeCache), counted by the RGPU_TRACE lines of
// this process (the test sets RGPU_TRACE=1; stderr goes to a file read
// back): asking again about a kernel, through either API, makes no round
// trip; each call that may change an answer (cudaFuncSetAttribute, failed
// or not, cuFuncSetAttribute, cudaFuncSetCacheConfig,
// cudaFuncSetSharedMemConfig, cudaDeviceSetCacheConfig, cudaDeviceReset)
// makes the next query ask again, and the new value is seen. Device
// attributes (but the compute mode) and a context's id are asked once.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver_check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cudaFuncSetSharedMemConfig: still exported

extern "C" __global__ void dyn_shared(float* out) {
  extern __shared__ float buf[];
  buf[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = buf[threadIdx.x];
}

__global__ void other(int* p) { *p = 1; }

namespace {

char g_trace_path[] = "/tmp/rgpu-e2e-trace-XXXXXX";

// Synchronous round trips of `op` so far: the trace lines naming it.
int round_trips(const char* op) {
  FILE* f = std::fopen(g_trace_path, "r");
  if (!f) return -1;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  const std::string needle = std::string("trace ") + op + " args=";
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// The round trips of `op` that `step` made.
template <typename Step>
int trips(const char* op, Step&& step) {
  int before = round_trips(op);
  step();
  return round_trips(op) - before;
}

constexpr const char* kAttributes = "FuncGetAttributes";
constexpr const char* kOccupancy = "OccupancyMaxActiveBlocks";
constexpr const char* kDeviceAttribute = "DeviceGetAttribute";
constexpr const char* kContextId = "cuCtxGetId";

int max_dynamic_shared(const void* kernel) {
  cudaFuncAttributes a{};
  OK(cudaFuncGetAttributes(&a, kernel));
  return a.maxDynamicSharedSizeBytes;
}

int occupancy(const void* kernel, int block_size) {
  int blocks = -1;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_size, 0));
  return blocks;
}

}  // namespace

int main() {
  int fd = mkstemp(g_trace_path);
  if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
    std::printf("FAILED: no trace file\n");
    return finish();
  }
  close(fd);
  const void* k = reinterpret_cast<const void*>(dyn_shared);
  const void* k2 = reinterpret_cast<const void*>(other);
  int first = 0;
  // The first query asks the server (RGPU_TRACE must be on for it to be
  // counted); the next ones do not.
  CHECK(trips(kAttributes, [&] { first = max_dynamic_shared(k); }) == 1);
  CHECK(first > 0);
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == first); }) == 0);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k2); }) == 1);  // another kernel: its own answer
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k2); }) == 0);

  // A setter makes the next query ask; the new value is seen.
  OK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10));
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == 64 << 10); }) == 1);
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == 64 << 10); }) == 0);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k2); }) == 0);  // the other kernel's is kept
  // A refused one too, and nothing changed.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, -1));
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == 64 << 10); }) == 1);

  // The driver API shares the answers: a runtime kernel handle is a CUfunction.
  OK(cudaSetDevice(0));
  CU_OK(cuInit(0));
  cudaFunction_t f;
  OK(cudaGetFuncBySymbol(&f, k));
  CUfunction cu = reinterpret_cast<CUfunction>(f);
  int value = -1;
  CHECK(trips(kAttributes, [&] {
          CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cu));
          CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, cu));
          CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cu));
        }) == 0);
  CHECK(value == 64 << 10);
  CU_OK(cuFuncSetAttribute(cu, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 32 << 10));
  CHECK(trips(kAttributes, [&] {
          CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cu));
        }) == 1);
  CHECK(value == 32 << 10);
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == 32 << 10); }) == 0);

  // Occupancy: kept per block size, shared by both APIs.
  int blocks = 0;
  CHECK(trips(kOccupancy, [&] { blocks = occupancy(k, 128); }) == 1);
  CHECK(blocks > 0);
  CHECK(trips(kOccupancy, [&] { CHECK(occupancy(k, 128) == blocks); }) == 0);
  CHECK(trips(kOccupancy, [&] { occupancy(k, 256); }) == 1);
  CHECK(trips(kOccupancy, [&] {
          int b = -1;
          CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&b, cu, 128, 0));
          CHECK(b == blocks);
        }) == 0);

  // Cache preferences, the kernel's and the device's, count in occupancy.
  OK(cudaFuncSetCacheConfig(k, cudaFuncCachePreferShared));
  CHECK(trips(kOccupancy, [&] { occupancy(k, 128); }) == 1);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k); }) == 1);
  cudaFuncSetSharedMemConfig(k, cudaSharedMemBankSizeFourByte);  // its status does not matter here
  CHECK(trips(kOccupancy, [&] { occupancy(k, 128); }) == 1);
  OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
  CHECK(trips(kOccupancy, [&] { occupancy(k, 128); }) == 1);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k2); }) == 1);

  // Device attributes never change, but the compute mode: asked once, in
  // either API (NVIDIA's runtime, in a static build, asked at its start).
  int sms = 0;
  CHECK(trips(kDeviceAttribute, [&] { OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0)); }) <= 1);
  CHECK(sms > 0);
  CHECK(trips(kDeviceAttribute, [&] {
          int again = -1;
          OK(cudaDeviceGetAttribute(&again, cudaDevAttrMultiProcessorCount, 0));
          CU_OK(cuDeviceGetAttribute(&again, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
          CHECK(again == sms);
        }) == 0);
  CHECK(trips(kDeviceAttribute, [&] {
          int mode;
          OK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
          OK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
        }) == 2);
  // The context's id: asked once, until a reset ends the context.
  unsigned long long id = 0;
  CHECK(trips(kContextId, [&] { CU_OK(cuCtxGetId(nullptr, &id)); }) == 1);
  CHECK(trips(kContextId, [&] {
          unsigned long long again = 0;
          CU_OK(cuCtxGetId(nullptr, &again));
          CHECK(again == id);
        }) == 0);
  // A green context's id is its own, asked once; its destruction forgets
  // the device's ids (a later green context may take its server slot).
  CUdevResource sms_resource{}, part{};
  CU_OK(cuDeviceGetDevResource(0, &sms_resource, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 1;
  CU_OK(cuDevSmResourceSplitByCount(&part, &groups, &sms_resource, nullptr, 0, 8));
  CUdevResourceDesc desc;
  CU_OK(cuDevResourceGenerateDesc(&desc, &part, 1));
  CUgreenCtx green;
  CU_OK(cuGreenCtxCreate(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CUcontext green_ctx, primary;
  CU_OK(cuCtxFromGreenCtx(&green_ctx, green));
  CU_OK(cuCtxGetCurrent(&primary));
  CU_OK(cuCtxSetCurrent(green_ctx));
  CHECK(trips(kContextId, [&] { CU_OK(cuCtxGetId(nullptr, &id)); }) == 1);
  CHECK(trips(kContextId, [&] { CU_OK(cuCtxGetId(nullptr, &id)); }) == 0);
  CU_OK(cuCtxSetCurrent(primary));
  CU_OK(cuGreenCtxDestroy(green));
  CHECK(trips(kContextId, [&] { CU_OK(cuCtxGetId(nullptr, &id)); }) == 1);

  // A reset forgets every kernel's: the attribute set above is gone.
  OK(cudaDeviceReset());
  CHECK(trips(kAttributes, [&] { CHECK(max_dynamic_shared(k) == first); }) == 1);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k2); }) == 1);
  CHECK(trips(kAttributes, [&] { max_dynamic_shared(k); }) == 0);
  CHECK(trips(kContextId, [&] { CU_OK(cuCtxGetId(nullptr, &id)); }) == 1);

  unlink(g_trace_path);
  return finish();
}
