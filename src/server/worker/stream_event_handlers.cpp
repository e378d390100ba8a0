// Streams and events: created by the session, then named by handle.
#include <vector>

#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/host_callbacks.hpp"
#include "server/worker/host_node_records.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Decodes a handle and checks it belongs to the session's set.
#define RGPU_STREAM(name)                                         \
  auto name = req.args.get<uint64_t>();                           \
  if (!s.valid_stream(name)) return cudaErrorInvalidResourceHandle
#define RGPU_EVENT(name)                                          \
  auto name = req.args.get<uint64_t>();                           \
  if (!s.valid_event(name)) return cudaErrorInvalidResourceHandle

int32_t stream_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto flags = req.args.get<uint32_t>();
  auto priority = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.streams.room_for_one_more()) return cudaErrorMemoryAllocation;
  Handle h = 0;
  if (int32_t e = s.backend().stream_create(&h, flags, priority)) return e;
  s.streams.add(h);
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t stream_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.streams.contains(h)) return cudaErrorInvalidResourceHandle;
  s.streams.remove(h);
  return s.backend().stream_destroy(h);
}

int32_t stream_synchronize(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(h);
  req.args.expect_end();
  return s.backend().stream_synchronize(h);
}

int32_t stream_query(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(h);
  req.args.expect_end();
  return s.backend().stream_query(h);
}

int32_t stream_wait_event(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  RGPU_EVENT(event);
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  return s.backend().stream_wait_event(stream, event, flags);
}

// Args: flags, how many (a client makes events ahead in batches). Reply:
// how many were made, at least one (fewer where the session's bound leaves
// less room, or the backend fails after the first), then each.
int32_t event_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto flags = req.args.get<uint32_t>();
  auto count = req.args.get<uint32_t>();
  req.args.expect_end();
  if (count == 0 || count > proto::kMaxEventBatch) return cudaErrorInvalidValue;
  std::vector<Handle> made;
  for (uint32_t i = 0; i < count; ++i) {
    Handle h = 0;
    int32_t e = s.events.room_for_one_more() ? s.backend().event_create(&h, flags) : cudaErrorMemoryAllocation;
    if (e != cudaSuccess) {
      if (made.empty()) return e;
      break;
    }
    s.events.add(h);
    made.push_back(h);
  }
  out.put<uint32_t>(static_cast<uint32_t>(made.size()));
  for (Handle h : made) out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t event_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.events.remove(h)) return cudaErrorInvalidResourceHandle;
  return s.backend().event_destroy(h);
}

int32_t event_record(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EVENT(event);
  RGPU_STREAM(stream);
  req.args.expect_end();
  return s.backend().event_record(event, stream);
}

int32_t event_synchronize(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EVENT(h);
  req.args.expect_end();
  return s.backend().event_synchronize(h);
}

int32_t event_query(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EVENT(h);
  req.args.expect_end();
  return s.backend().event_query(h);
}

int32_t event_elapsed_time(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_EVENT(start);
  RGPU_EVENT(end);
  req.args.expect_end();
  float ms = 0;
  if (int32_t e = s.backend().event_elapsed_time(&ms, start, end)) return e;
  out.put(ms);
  return cudaSuccess;
}

// The attributes a stream takes (cudaStreamAttr*).
bool stream_attribute(int32_t attr) {
  return attr == cudaLaunchAttributeAccessPolicyWindow || attr == cudaLaunchAttributeSynchronizationPolicy ||
         attr == cudaLaunchAttributePriority || attr == cudaLaunchAttributeMemSyncDomainMap ||
         attr == cudaLaunchAttributeMemSyncDomain;
}

int32_t stream_set_attribute(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  auto attr = req.args.get<int32_t>();
  auto value = req.args.get<cudaLaunchAttributeValue>();
  req.args.expect_end();
  if (!stream_attribute(attr)) return cudaErrorInvalidValue;
  if (attr == cudaLaunchAttributeAccessPolicyWindow) {
    // The window names device memory: it must be the session's own.
    const auto& w = value.accessPolicyWindow;
    if (w.num_bytes && !s.owns(reinterpret_cast<uint64_t>(w.base_ptr), w.num_bytes)) return cudaErrorInvalidValue;
  }
  return s.backend().stream_set_attribute(stream, static_cast<cudaLaunchAttributeID>(attr), value);
}

int32_t stream_get_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_STREAM(stream);
  auto attr = req.args.get<int32_t>();
  req.args.expect_end();
  if (!stream_attribute(attr)) return cudaErrorInvalidValue;
  cudaLaunchAttributeValue value{};
  if (int32_t e = s.backend().stream_get_attribute(stream, static_cast<cudaLaunchAttributeID>(attr), &value))
    return e;
  out.put(value);
  return cudaSuccess;
}

// What a host function queued on a stream needs when the stream gets there.
struct DueCallback {
  HostCallbacks* callbacks;
  uint64_t id, seq;
};

void run_due_callback(void* arg) {
  auto* due = static_cast<DueCallback*>(arg);
  due->callbacks->run(due->id, due->seq);
  delete due;
}

int32_t launch_host_func(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  auto id = req.args.get<uint64_t>();
  req.args.expect_end();
  // The client joins its callback connection before its first callback.
  if (!s.host_callbacks.attached()) return cudaErrorInvalidValue;
  // Captured, it becomes a graph's host node, which may run many times.
  CaptureInfo capture;
  s.backend().graphs().capture_info(stream, &capture);
  if (capture.status != cudaStreamCaptureStatusNone) {
    s.backend().graphs().set_host_node_runner(HostNodeRecords::run);
    return s.backend().graphs().capture_host_node(stream, s.host_nodes.record(id));
  }
  auto* due = new DueCallback{&s.host_callbacks, id, req.header().seq};
  int32_t e = s.backend().launch_host_func(stream, run_due_callback, due);
  if (e) delete due;
  return e;
}

int32_t event_record_with_flags(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EVENT(event);
  RGPU_STREAM(stream);
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  return s.backend().event_record_with_flags(event, stream, flags);
}

// Both streams are the session's (the client checked they share a device).
int32_t stream_copy_attributes(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(dst);
  RGPU_STREAM(src);
  req.args.expect_end();
  return s.backend().stream_copy_attributes(dst, src);
}

#undef RGPU_STREAM
#undef RGPU_EVENT

}  // namespace

void register_stream_event_handlers(Dispatcher& d) {
  d.add(proto::kOpStreamCreate, stream_create);
  d.add(proto::kOpStreamDestroy, stream_destroy);
  d.add(proto::kOpStreamSynchronize, stream_synchronize);
  d.add(proto::kOpStreamQuery, stream_query);
  d.add(proto::kOpStreamWaitEvent, stream_wait_event);
  d.add(proto::kOpEventCreate, event_create);
  d.add(proto::kOpEventDestroy, event_destroy);
  d.add(proto::kOpEventRecord, event_record);
  d.add(proto::kOpEventSynchronize, event_synchronize);
  d.add(proto::kOpEventQuery, event_query);
  d.add(proto::kOpEventElapsedTime, event_elapsed_time);
  d.add(proto::kOpLaunchHostFunc, launch_host_func);
  d.add(proto::kOpStreamSetAttribute, stream_set_attribute);
  d.add(proto::kOpStreamGetAttribute, stream_get_attribute);
  d.add(proto::kOpEventRecordWithFlags, event_record_with_flags);
  d.add(proto::kOpStreamCopyAttributes, stream_copy_attributes);
}

}  // namespace rgpu::server
