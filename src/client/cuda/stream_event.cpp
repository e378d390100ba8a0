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

CUresult ready() { return driver_initialized() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

}  // namespace

// CU_STREAM_* and cudaStream* flags have the same values, as do CU_EVENT_*
// and cudaEvent* ones.
extern "C" CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamCreateWithFlags(reinterpret_cast<cudaStream_t*>(phStream), Flags));
}

extern "C" CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  if (!hStream) return CUDA_ERROR_INVALID_HANDLE;
  return to_cu(cudaStreamDestroy(rt(hStream)));
}

extern "C" CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamSynchronize(rt(hStream)));
}

extern "C" CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamQuery(rt(hStream)));
}

extern "C" CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamWaitEvent(rt(hStream), rt(hEvent), Flags));
}

extern "C" CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(phEvent), Flags));
}

extern "C" CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventRecord(rt(hEvent), rt(hStream)));
}

extern "C" CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventSynchronize(rt(hEvent)));
}

extern "C" CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventQuery(rt(hEvent)));
}

extern "C" CUresult CUDAAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventElapsedTime(pMilliseconds, rt(hStart), rt(hEnd)));
}

extern "C" CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaEventDestroy(rt(hEvent)));
}

extern "C" CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamCreateWithPriority(reinterpret_cast<cudaStream_t*>(phStream), flags, priority));
}

extern "C" CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int* priority) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamGetPriority(rt(hStream), priority));
}

extern "C" CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamGetFlags(rt(hStream), flags));
}

extern "C" CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  KeepLastError keep;
  if (CUresult e = ready()) return e;
  return to_cu(cudaStreamGetId(rt(hStream), streamId));
}
