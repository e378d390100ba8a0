// Streams and events are the runtime's (CUstream is cudaStream_t, CUevent
// is cudaEvent_t), so either API may use the other's handles.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <new>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/green_context_handles.hpp"
#include "client/cuda/primary_context.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaEvent_t rt(CUevent e) { return reinterpret_cast<cudaEvent_t>(e); }

// The device a stream belongs to (the current one for 0 and the per-thread
// and legacy handles), as routing a call on it finds it.
CUresult stream_device(CUstream s, int* device) {
  if (CUresult e = driver_ready()) return e;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpStreamQuery);
    uint64_t remote;
    if (cudaError_t e = call.to_stream(rt(s), &remote)) return e;
    *device = call.device_index();
    return cudaSuccess;
  }));
}

// cuStreamAddCallback's callback, run by the runtime's host function path.
struct StreamCallback {
  CUstreamCallback fn;
  CUstream stream;
  void* user_data;
};

void run_stream_callback(void* p) {
  auto* c = static_cast<StreamCallback*>(p);
  c->fn(c->stream, CUDA_SUCCESS, c->user_data);
  delete c;
}

}  // namespace

// CU_STREAM_* and cudaStream* flags have the same values, as do CU_EVENT_*
// and cudaEvent* ones.
extern "C" CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return through_runtime([&] { return cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(phStream), Flags); });
}

extern "C" CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (!hStream) return CUDA_ERROR_INVALID_HANDLE;
  return to_cu(cudaStreamDestroy(rt(hStream)));
}

extern "C" CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  return through_runtime([&] { return cudaStreamSynchronize(rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  return through_runtime([&] { return cudaStreamQuery(rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return through_runtime([&] { return cudaStreamWaitEvent(rt(hStream), rt(hEvent), Flags); });
}

extern "C" CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return through_runtime([&] { return cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(phEvent), Flags); });
}

extern "C" CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  return through_runtime([&] { return cudaEventRecord(rt(hEvent), rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  return through_runtime([&] { return cudaEventSynchronize(rt(hEvent)); });
}

extern "C" CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  return through_runtime([&] { return cudaEventQuery(rt(hEvent)); });
}

extern "C" CUresult CUDAAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return through_runtime([&] { return cudaEventElapsedTime(pMilliseconds, rt(hStart), rt(hEnd)); });
}

extern "C" CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  return through_runtime([&] { return cudaEventDestroy(rt(hEvent)); });
}

extern "C" CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return through_runtime([&] { return cudaStreamCreateWithPriority(reinterpret_cast<cudaStream_t*>(phStream), flags, priority); });
}

extern "C" CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int* priority) {
  return through_runtime([&] { return cudaStreamGetPriority(rt(hStream), priority); });
}

extern "C" CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  return through_runtime([&] { return cudaStreamGetFlags(rt(hStream), flags); });
}

extern "C" CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  return through_runtime([&] { return cudaStreamGetId(rt(hStream), streamId); });
}

// A stream of a green context is of the green context's CUcontext
// (cuCtxFromGreenCtx's).
extern "C" CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  KeepLastError keep;
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  int dev;
  if (CUresult e = stream_device(hStream, &dev)) return e;
  CUgreenCtx green;
  if (CUresult e = cuStreamGetGreenCtx(hStream, &green)) return e;
  *pctx = green ? context_of_green(green) : primary_context(dev);
  return CUDA_SUCCESS;
}

// Here a green context's stream is of the device's primary context too.
extern "C" CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  KeepLastError keep;
  if (!pCtx || !pGreenCtx) return CUDA_ERROR_INVALID_VALUE;
  int dev;
  if (CUresult e = stream_device(hStream, &dev)) return e;
  if (CUresult e = cuStreamGetGreenCtx(hStream, pGreenCtx)) return e;
  *pCtx = primary_context(dev);
  return CUDA_SUCCESS;
}

// CUstreamAttrID and cudaStreamAttrID, CUstreamAttrValue and
// cudaStreamAttrValue number and lay out alike.
static_assert(sizeof(CUstreamAttrValue) == sizeof(cudaStreamAttrValue));

extern "C" CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out) {
  return through_runtime([&] {
    return cudaStreamGetAttribute(rt(hStream), static_cast<cudaStreamAttrID>(attr),
                                  reinterpret_cast<cudaStreamAttrValue*>(value_out));
  });
}

extern "C" CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value) {
  return through_runtime([&] {
    return cudaStreamSetAttribute(rt(hStream), static_cast<cudaStreamAttrID>(attr),
                                  reinterpret_cast<const cudaStreamAttrValue*>(value));
  });
}

extern "C" CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return through_runtime([&] { return cudaLaunchHostFunc(rt(hStream), fn, userData); });
}

extern "C" CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData,
                                                unsigned int flags) {
  if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  auto* c = new (std::nothrow) StreamCallback{callback, hStream, userData};
  if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult e = through_runtime([&] { return cudaLaunchHostFunc(rt(hStream), run_stream_callback, c); });
  if (e != CUDA_SUCCESS) delete c;
  return e;
}

