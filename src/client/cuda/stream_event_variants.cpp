// The driver's names for the runtime's stream and event variants
// (client/cudart/stream_event_variants.cpp): a stream's device, an event
// record with flags, copied stream attributes. CUdevice is the runtime's
// device ordinal; CU_EVENT_RECORD_* are cudaEventRecord* values.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  return through_runtime([&] { return cudaStreamGetDevice(reinterpret_cast<cudaStream_t>(hStream), device); });
}

extern "C" CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return through_runtime([&] {
    return cudaEventRecordWithFlags(reinterpret_cast<cudaEvent_t>(hEvent), reinterpret_cast<cudaStream_t>(hStream),
                                    flags);
  });
}

extern "C" CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src) {
  return through_runtime([&] {
    return cudaStreamCopyAttributes(reinterpret_cast<cudaStream_t>(dst), reinterpret_cast<cudaStream_t>(src));
  });
}
