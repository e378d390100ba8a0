// One connection of a session: the application's thread it stands for sends
// its calls here in order, and the worker serves it on a thread of its own,
// so one thread's blocking call never holds up another's.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "server/backend/backend.hpp"
#include "server/worker/staging_pool.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

class Lane {
 public:
  explicit Lane(transport::Connection& conn) : conn_(conn) {}
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  transport::Connection& connection() { return conn_; }

  // The staging buffers of `device` for this lane's copies. A reset of the
  // device (by any lane) bumps its `reset_epoch`: buffers from before it
  // died with the device's context and are forgotten, not freed.
  StagingPool& staging(Backend& backend, MemoryLimit& limit, int device, uint64_t reset_epoch);
  // Frees this lane's buffers of `device` while they are still valid.
  void drop_staging(int device) { staging_.erase(device); }

  // Set by handlers that sent their reply themselves.
  bool reply_sent = false;
  // A descriptor a handler hands the client with its successful reply
  // (shareable handles); owned here, closed once sent or refused.
  int reply_fd = -1;
  // The first error of this lane's asynchronous calls since its last reply.
  int32_t deferred = 0;

 private:
  struct DeviceStaging {
    uint64_t epoch = 0;
    std::unique_ptr<StagingPool> pool;
  };
  transport::Connection& conn_;
  std::unordered_map<int, DeviceStaging> staging_;
};

}  // namespace rgpu::server
