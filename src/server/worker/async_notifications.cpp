#include "server/worker/async_notifications.hpp"

#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {

AsyncNotifications::~AsyncNotifications() {
  for (auto& [registration, entry] : entries_) backend_.unregister_async_notification(entry.device, registration);
}

int32_t AsyncNotifications::add(int device, uint64_t id, uint64_t* registration) {
  auto sink = std::make_unique<Sink>(callbacks_, id);
  std::lock_guard lock(mutex_);
  Handle h = 0;
  if (int32_t e = backend_.register_async_notification(device, sink.get(), &h)) return e;
  entries_[h] = Entry{device, std::move(sink)};
  *registration = h;
  return cudaSuccess;
}

int32_t AsyncNotifications::remove(int device, uint64_t registration) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(registration);
  if (it == entries_.end() || it->second.device != device) return cudaErrorInvalidValue;
  // Once the backend has let go of the sink, no notification reaches it.
  if (int32_t e = backend_.unregister_async_notification(device, registration)) return e;
  entries_.erase(it);
  return cudaSuccess;
}

namespace {

int32_t register_notification(SessionContext& s, Request& req, proto::Writer& out) {
  auto device = req.args.get<int32_t>();
  auto id = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  if (!HostNodeRecords::valid(id)) return cudaErrorInvalidValue;
  uint64_t registration = 0;
  if (int32_t e = s.notifications.add(device, id, &registration)) return e;
  out.put(registration);
  return cudaSuccess;
}

int32_t unregister_notification(SessionContext& s, Request& req, proto::Writer&) {
  auto device = req.args.get<int32_t>();
  auto registration = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  return s.notifications.remove(device, registration);
}

}  // namespace

void register_async_notification_handlers(Dispatcher& d) {
  d.add(proto::kOpDeviceRegisterAsyncNotification, register_notification);
  d.add(proto::kOpDeviceUnregisterAsyncNotification, unregister_notification);
}

}  // namespace rgpu::server
