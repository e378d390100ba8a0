// Streams and events are the runtime's (CUstream is cudaStream_t, CUevent
// is cudaEvent_t), so either API may use the other's handles.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaEvent_t rt(CUevent e) { return reinterpret_cast<cudaEvent_t>(e); }

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
