#include "client/core/async_notifications.hpp"

#include <mutex>
#include <unordered_set>

#include "client/core/call.hpp"
#include "client/core/host_callback_runner.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// What a handle the application holds stands for.
struct Registration {
  int device;
  uint64_t remote;       // the worker's registration
  uint64_t callback_id;  // in the device's session's callback runner
};

std::mutex g_mutex;
std::unordered_set<Registration*>& registrations() {
  static auto* s = new std::unordered_set<Registration*>;
  return *s;
}

cudaAsyncCallbackHandle_t handle_of(Registration* r) { return reinterpret_cast<cudaAsyncCallbackHandle_t>(r); }

}  // namespace

cudaError_t register_async_notification(int device, cudaAsyncCallback fn, void* user_data,
                                        cudaAsyncCallbackHandle_t* handle) {
  if (!fn || !handle) return cudaErrorInvalidValue;
  if (HostCallbackRunner::in_notification()) return cudaErrorNotPermitted;
  Call call(proto::kOpDeviceRegisterAsyncNotification);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  HostCallbackRunner& runner = call.device()->session->host_callbacks();
  auto* r = new Registration{device, 0, 0};
  r->callback_id = runner.add_notification(
      [fn, user_data, h = handle_of(r)](cudaAsyncNotificationInfo_t& info) { fn(&info, user_data, h); });
  if (!r->callback_id) {  // the server offers no callback connection
    delete r;
    return cudaErrorNotSupported;
  }
  call.args().put<int32_t>(remote).put<uint64_t>(r->callback_id);
  if (cudaError_t e = call.run()) {
    runner.drop_notification(r->callback_id);
    delete r;
    return e;
  }
  r->remote = call.reply().get<uint64_t>();
  {
    std::lock_guard lock(g_mutex);
    registrations().insert(r);
  }
  *handle = handle_of(r);
  return cudaSuccess;
}

cudaError_t unregister_async_notification(int device, cudaAsyncCallbackHandle_t handle) {
  if (HostCallbackRunner::in_notification()) return cudaErrorNotPermitted;
  auto* r = reinterpret_cast<Registration*>(handle);
  {
    std::lock_guard lock(g_mutex);
    if (!handle || !registrations().count(r) || r->device != device) return cudaErrorInvalidValue;
  }
  Call call(proto::kOpDeviceUnregisterAsyncNotification);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  call.args().put<int32_t>(remote).put<uint64_t>(r->remote);
  if (cudaError_t e = call.run()) return e;
  call.device()->session->host_callbacks().drop_notification(r->callback_id);
  {
    std::lock_guard lock(g_mutex);
    // A concurrent unregister of the same handle lost the race at the server.
    if (!registrations().erase(r)) return cudaErrorInvalidValue;
  }
  delete r;
  return cudaSuccess;
}

}  // namespace rgpu::client
