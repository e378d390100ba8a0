// Async notifications (cudaDeviceRegisterAsyncNotification): the worker
// registers a sink of its own with the backend for each of the client's
// callbacks, and each notification the driver raises travels, type and
// information by value, over the session's callback connection to the
// application, which runs its callback there. Registrations go with the
// session.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "server/backend/backend.hpp"
#include "server/worker/host_callbacks.hpp"

namespace rgpu::server {

class AsyncNotifications {
 public:
  AsyncNotifications(Backend& backend, HostCallbacks& callbacks) : backend_(backend), callbacks_(callbacks) {}
  ~AsyncNotifications();

  // Notifications of `device` go to client callback `id`.
  int32_t add(int device, uint64_t id, uint64_t* registration);
  int32_t remove(int device, uint64_t registration);

 private:
  struct Sink final : AsyncNotificationSink {
    Sink(HostCallbacks& callbacks, uint64_t id) : callbacks(callbacks), id(id) {}
    void notify(const cudaAsyncNotificationInfo_t& info) override { callbacks.notify(id, info); }
    HostCallbacks& callbacks;
    uint64_t id;
  };
  struct Entry {
    int device;
    std::unique_ptr<Sink> sink;
  };

  Backend& backend_;
  HostCallbacks& callbacks_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> entries_;  // by the backend's registration
};

}  // namespace rgpu::server
