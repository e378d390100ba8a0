// The application's side of host callbacks (see
// server/worker/host_callbacks.hpp): a thread of the session waits on the
// session's callback connection, runs each callback the worker says is due,
// in order, and tells the worker it ran, which lets the stream go on. Async
// notifications arrive on the same connection and run their callback too.
// A graph's staged copy (staged_copy.hpp) gets its bytes with the
// message, or sends them back with its answer.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>

#include "protocol/codec.hpp"
#include "transport/transport.hpp"

namespace rgpu::client {

class Session;

class HostCallbackRunner {
 public:
  explicit HostCallbackRunner(Session& session) : session_(session) {}

  // Registers a callback to run once, queued on `stream` (the server's
  // handle) of `device`; its number, or 0 when the session has no callback
  // connection (the server offers no way to join). A graph's host node
  // (the worker says sequence 0) runs it each time the graph gets there.
  uint64_t add(std::function<void()> fn, uint16_t device, uint64_t stream);
  // A graph's host node that moves bytes through the worker's staging
  // block: fn gets the block's bytes the worker sent (a download) or fills
  // the bytes it asked for (an upload); its number, or 0 as add's.
  uint64_t add_staged(std::function<void(std::span<uint8_t>)> fn, uint16_t device);
  // Forgets a callback whose queueing failed.
  void drop(uint64_t id);
  // A callback for async notifications, run for each one the worker
  // forwards until dropped; its number, or 0 as add's.
  uint64_t add_notification(std::function<void(cudaAsyncNotificationInfo_t&)> fn);
  void drop_notification(uint64_t id);
  // True on this thread while it runs a notification callback (which may
  // not register or unregister one).
  static bool in_notification();

 private:
  struct Pending {
    std::function<void(std::span<uint8_t>)> fn;
    uint16_t device;
    uint64_t stream;
  };
  bool start_locked();
  uint64_t add_pending(Pending p);
  void serve(std::unique_ptr<transport::Connection> conn);
  void run_notification(proto::Reader& r);

  Session& session_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<uint64_t, std::function<void(cudaAsyncNotificationInfo_t&)>> notifications_;
  uint64_t next_id_ = 1;
  bool started_ = false;
  bool failed_ = false;
};

}  // namespace rgpu::client
