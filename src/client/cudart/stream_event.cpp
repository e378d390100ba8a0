// Streams and events are server objects; the application holds client
// handles that name the owning device (see client/core/handles.hpp).
#include <cuda_runtime_api.h>

#include <functional>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/handles.hpp"
#include "client/core/host_callback_runner.hpp"
#include "client/core/session.hpp"
#include "client/cudart/cross_server_wait.hpp"
#include "client/cudart/event_reserve.hpp"
#include "client/move/moved_event_times.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

cudaError_t create_stream(cudaStream_t* out, unsigned flags, int priority) {
  if (!out) return cudaErrorInvalidValue;
  if (flags & ~cudaStreamNonBlocking) return cudaErrorInvalidValue;
  Call call(proto::kOpStreamCreate);
  if (cudaError_t e = call.to_current_device()) return e;
  call.args().put<uint32_t>(flags).put<int32_t>(priority);
  if (cudaError_t e = call.run()) return e;
  *out = streams().add(call.device_index(), call.reply().get<uint64_t>(), flags, priority);
  return cudaSuccess;
}

// Calls naming one stream and returning only a status.
cudaError_t on_stream(uint16_t op, cudaStream_t stream) {
  Call call(op);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  call.args().put<uint64_t>(s);
  return call.run();
}

// Queues fn on the stream; the session's callback thread runs it when the
// server's stream gets there (see client/core/host_callback_runner.hpp).
cudaError_t host_callback(cudaStream_t stream, std::function<void()> fn) {
  Call call(proto::kOpLaunchHostFunc);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  HostCallbackRunner& runner = call.device()->session->host_callbacks();
  uint64_t id = runner.add(std::move(fn), call.wire_device(), s);
  if (!id) return cudaErrorNotSupported;
  call.args().put<uint64_t>(s).put<uint64_t>(id);
  cudaError_t e = call.post();
  if (e) runner.drop(id);
  return e;
}

cudaError_t on_event(uint16_t op, cudaEvent_t event) {
  Call call(op);
  uint64_t ev;
  if (cudaError_t e = call.to_event(event, &ev)) return e;
  call.args().put<uint64_t>(ev);
  return call.run();
}

cudaError_t create_event(cudaEvent_t* out, unsigned flags) {
  if (!out) return cudaErrorInvalidValue;
  constexpr unsigned kKnown = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (flags & ~kKnown) return cudaErrorInvalidValue;
  Call call(proto::kOpEventCreate);
  if (cudaError_t e = call.to_current_device()) return e;
  EventReserve& reserve = EventReserve::get();
  uint64_t remote;
  if (!reserve.take(call.device_index(), call.wire_device(), flags, &remote)) {
    call.args().put<uint32_t>(flags).put<uint32_t>(EventReserve::kBatch);
    if (cudaError_t e = call.run()) return e;
    uint32_t made = call.reply().get<uint32_t>();
    if (made == 0 || made > EventReserve::kBatch) return cudaErrorUnknown;
    remote = call.reply().get<uint64_t>();
    for (uint32_t i = 1; i < made; ++i)
      reserve.put(call.device_index(), call.wire_device(), flags, call.reply().get<uint64_t>());
  }
  *out = events().add(call.device_index(), remote, flags);
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return api([&] { return create_stream(pStream, cudaStreamDefault, 0); });
}

extern "C" cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return api([&] { return create_stream(pStream, flags, 0); });
}

extern "C" cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return api([&] { return create_stream(pStream, flags, priority); });
}

extern "C" cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (is_default_stream(stream)) return cudaErrorInvalidResourceHandle;
    cudaError_t e = on_stream(proto::kOpStreamDestroy, stream);
    if (e == cudaSuccess) streams().remove(stream);
    return e;
  });
}

extern "C" cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpStreamSynchronize);
    uint64_t s;
    if (cudaError_t e = call.to_stream(stream, &s)) return e;
    call.args().put<uint64_t>(s);
    return call.run_synchronizing(s);
  });
}

extern "C" cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return api([&] { return on_stream(proto::kOpStreamQuery, stream); });
}

extern "C" cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpStreamWaitEvent);
    uint64_t s, ev;
    RemoteObject e_obj;
    if (!events().find(event, &e_obj)) return cudaErrorInvalidResourceHandle;
    if (cudaError_t e = call.to_stream(stream, &s)) return e;
    if (Runtime::get().device(e_obj.device)->session != call.device()->session)
      return wait_across_servers(stream, call.device_index(), event);
    ev = e_obj.remote;
    call.args().put<uint64_t>(s).put<uint64_t>(ev).put<uint32_t>(flags);
    return call.post();
  });
}

extern "C" cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return api([&] { return create_event(event, cudaEventDefault); });
}

extern "C" cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return api([&] { return create_event(event, flags); });
}

extern "C" cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpEventRecord);
    uint64_t s;
    RemoteObject e_obj;
    if (!events().find(event, &e_obj)) return cudaErrorInvalidResourceHandle;
    if (cudaError_t e = call.to_stream(stream, &s)) return e;
    if (call.device_index() != e_obj.device) return cudaErrorInvalidResourceHandle;
    call.args().put<uint64_t>(e_obj.remote).put<uint64_t>(s);
    MovedEventTimes::get().recorded(event);
    return call.post();
  });
}

extern "C" cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return api([&] { return on_event(proto::kOpEventSynchronize, event); });
}

extern "C" cudaError_t cudaEventQuery(cudaEvent_t event) {
  return api([&] { return on_event(proto::kOpEventQuery, event); });
}

// Posted: the handle is checked here, and nothing waits for the server.
extern "C" cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpEventDestroy);
    uint64_t ev;
    if (cudaError_t e = call.to_event(event, &ev)) return e;
    call.args().put<uint64_t>(ev);
    cudaError_t e = call.post();
    if (e == cudaSuccess) {
      events().remove(event);
      MovedEventTimes::get().recorded(event);  // its handle may name a new event next
    }
    return e;
  });
}

namespace {

// The server's elapsed time between two events of one device.
cudaError_t server_elapsed(cudaEvent_t start, const RemoteObject& a, const RemoteObject& b, float* ms) {
  Call call(proto::kOpEventElapsedTime);
  uint64_t ev;
  if (cudaError_t e = call.to_event(start, &ev)) return e;
  call.args().put<uint64_t>(a.remote).put<uint64_t>(b.remote);
  if (cudaError_t e = call.run()) return e;
  *ms = call.reply().get<float>();
  return cudaSuccess;
}

// When an event happened, in ms after its device's last move's anchor: a
// moved time, or the server's reckoning from the anchor.
cudaError_t after_anchor(cudaEvent_t event, const RemoteObject& o, cudaEvent_t anchor, float* ms) {
  if (auto before = MovedEventTimes::get().before_anchor(event)) {
    *ms = -*before;
    return cudaSuccess;
  }
  RemoteObject a;
  if (!events().find(anchor, &a)) return cudaErrorInvalidResourceHandle;
  return server_elapsed(anchor, a, o, ms);
}

}  // namespace

extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return api([&]() -> cudaError_t {
    if (!ms) return cudaErrorInvalidValue;
    RemoteObject a, b;
    if (!events().find(start, &a) || !events().find(end, &b)) return cudaErrorInvalidResourceHandle;
    const MovedEventTimes& moved = MovedEventTimes::get();
    if (!moved.before_anchor(start) && !moved.before_anchor(end)) return server_elapsed(start, a, b, ms);
    auto anchor = moved.anchor(a.device);
    if (a.device != b.device || !anchor) return cudaErrorInvalidResourceHandle;
    float from = 0, to = 0;
    if (cudaError_t e = after_anchor(start, a, *anchor, &from)) return e;
    if (cudaError_t e = after_anchor(end, b, *anchor, &to)) return e;
    *ms = to - from;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  return api([&]() -> cudaError_t {
    if (!fn) return cudaErrorInvalidValue;
    return host_callback(stream, [fn, user_data] { fn(user_data); });
  });
}

extern "C" cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                             unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!callback || flags != 0) return cudaErrorInvalidValue;
    return host_callback(stream, [callback, stream, user_data] { callback(stream, cudaSuccess, user_data); });
  });
}

extern "C" cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                              const cudaStreamAttrValue* value) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    Call call(proto::kOpStreamSetAttribute);
    uint64_t s;
    if (cudaError_t e = call.to_stream(hStream, &s)) return e;
    call.args().put<uint64_t>(s).put<int32_t>(attr).put(*value);
    return call.run();
  });
}

extern "C" cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                              cudaStreamAttrValue* value_out) {
  return api([&]() -> cudaError_t {
    if (!value_out) return cudaErrorInvalidValue;
    Call call(proto::kOpStreamGetAttribute);
    uint64_t s;
    if (cudaError_t e = call.to_stream(hStream, &s)) return e;
    call.args().put<uint64_t>(s).put<int32_t>(attr);
    if (cudaError_t e = call.quiet().run()) return e;
    *value_out = call.reply().get<cudaStreamAttrValue>();
    return cudaSuccess;
  });
}
