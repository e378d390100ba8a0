// Driver streams and events: stream memory operations (values written and
// awaited in stream order, addresses checked), host callbacks in stream
// order, stream attributes, event record flags and the legacy names.
#include <cstdint>
#include <vector>

#include "driver_check.h"

#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuStreamWaitValue32
#undef cuStreamWriteValue32
extern "C" CUresult CUDAAPI cuStreamDestroy(CUstream stream);
extern "C" CUresult CUDAAPI cuEventDestroy(CUevent event);
extern "C" CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned flags);
extern "C" CUresult CUDAAPI cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned flags);

static std::vector<int> g_order;

static void CUDA_CB host_fn(void* data) { g_order.push_back(*static_cast<int*>(data)); }

static void CUDA_CB stream_callback(CUstream stream, CUresult status, void* data) {
  CHECK(status == CUDA_SUCCESS);
  CHECK(stream != nullptr);
  g_order.push_back(*static_cast<int*>(data));
}

int main() {
  CU_OK(cuInit(0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  CUdeviceptr flags;
  CU_OK(cuMemAlloc(&flags, 64));
  CU_OK(cuMemsetD8(flags, 0, 64));
  CU_OK(cuStreamWriteValue32(stream, flags, 7, CU_STREAM_WRITE_VALUE_DEFAULT));
  CU_OK(cuStreamWaitValue32(stream, flags, 7, CU_STREAM_WAIT_VALUE_EQ));
  CU_OK(cuStreamWriteValue64(stream, flags + 8, 0x1122334455667788ull, CU_STREAM_WRITE_VALUE_DEFAULT));
  CU_OK(cuStreamWaitValue64(stream, flags + 8, 0x1122334455667788ull, CU_STREAM_WAIT_VALUE_GEQ));
  CUstreamBatchMemOpParams ops[3] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = flags + 16;
  ops[0].writeValue.value = 0xf0;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = flags + 16;
  ops[1].waitValue.value = 0x10;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_AND;
  ops[2].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  ops[2].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
  CU_OK(cuStreamBatchMemOp(stream, 3, ops, 0));
  CU_OK(cuStreamSynchronize(stream));
  uint32_t words[6] = {};
  CU_OK(cuMemcpyDtoH(words, flags, sizeof words));
  CHECK(words[0] == 7 && words[2] == 0x55667788u && words[3] == 0x11223344u && words[4] == 0xf0);

  // Addresses the stream's device does not hold, unaligned ones, no operations.
  int host_word = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuStreamWriteValue32(stream, reinterpret_cast<CUdeviceptr>(&host_word), 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32(stream, flags + 2, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue64(stream, flags + 60, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamBatchMemOp(stream, 0, ops, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamWriteValue32(reinterpret_cast<CUstream>(&host_word), flags, 1, 0));
  CU_OK(cuStreamSynchronize(stream));

  // Host callbacks run in stream order, in this process.
  int one = 1, two = 2, three = 3;
  CU_OK(cuLaunchHostFunc(stream, host_fn, &one));
  CU_OK(cuStreamAddCallback(stream, stream_callback, &two, 0));
  CU_OK(cuLaunchHostFunc(stream, host_fn, &three));
  CU_OK(cuStreamSynchronize(stream));
  CHECK((g_order == std::vector<int>{1, 2, 3}));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(stream, stream_callback, &two, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(stream, nullptr, &two, 0));

  // Stream attributes, and copying them to another stream.
  CUstreamAttrValue policy{};
  policy.syncPolicy = CU_SYNC_POLICY_YIELD;
  CU_OK(cuStreamSetAttribute(stream, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &policy));
  CUstream other;
  CU_OK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  CU_OK(cuStreamCopyAttributes(other, stream));
  CUstreamAttrValue got{};
  CU_OK(cuStreamGetAttribute(other, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &got));
  CHECK(got.syncPolicy == CU_SYNC_POLICY_YIELD);

  // Events: record flags, legacy destroy names.
  CUevent start, stop;
  CU_OK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_OK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CU_OK(cuEventRecordWithFlags(start, stream, CU_EVENT_RECORD_DEFAULT));
  CU_OK(cuEventRecordWithFlags(stop, stream, CU_EVENT_RECORD_EXTERNAL));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(stop, stream, 0x80));
  CU_OK(cuEventSynchronize(stop));
  float ms = -1;
  CU_OK(cuEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0);
  CU_OK(cuEventDestroy(start));
  CU_OK(cuEventDestroy(stop));
  CU_OK(cuStreamDestroy(other));
  CU_OK(cuStreamDestroy(stream));
  CU_OK(cuMemFree(flags));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  return finish();
}
