// Stream and event calls beside the basic ones: a stream's device, an event
// record with flags, and copying one stream's attributes to another.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/per_thread_stream.hpp"
#include "client/move/moved_event_times.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

// Known here: a created stream lives on its device, a default stream on the
// current one.
extern "C" cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  return api([&]() -> cudaError_t {
    if (!device) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    cudaStream_t stream = effective_stream(hStream);
    if (is_default_stream(stream)) {
      *device = Runtime::current_device();
      return cudaSuccess;
    }
    RemoteObject o;
    if (!streams().find(stream, &o)) return cudaErrorInvalidResourceHandle;
    *device = o.device;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (flags & ~cudaEventRecordExternal) return cudaErrorInvalidValue;
    Call call(proto::kOpEventRecordWithFlags);
    uint64_t s;
    RemoteObject e_obj;
    if (!events().find(event, &e_obj)) return cudaErrorInvalidResourceHandle;
    if (cudaError_t e = call.to_stream(stream, &s)) return e;
    if (call.device_index() != e_obj.device) return cudaErrorInvalidResourceHandle;
    call.args().put<uint64_t>(e_obj.remote).put<uint64_t>(s).put<uint32_t>(flags);
    MovedEventTimes::get().recorded(event);
    return call.post();
  });
}

extern "C" cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
  return api([&]() -> cudaError_t {
    Call src_route(proto::kOpStreamCopyAttributes);
    uint64_t remote_src;
    if (cudaError_t e = src_route.to_stream(src, &remote_src)) return e;
    Call call(proto::kOpStreamCopyAttributes);
    uint64_t remote_dst;
    if (cudaError_t e = call.to_stream(dst, &remote_dst)) return e;
    // Streams of two devices (two servers, perhaps) share no attributes.
    if (call.device_index() != src_route.device_index()) return cudaErrorInvalidValue;
    call.args().put<uint64_t>(remote_dst).put<uint64_t>(remote_src);
    return call.run();
  });
}
