#include "client/core/host_callback_runner.hpp"

#include <thread>

#include "client/core/lane.hpp"
#include "client/core/server_order.hpp"
#include "client/core/session.hpp"
#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "client/core/move_gate.hpp"

namespace rgpu::client {

namespace {
thread_local bool t_in_notification = false;
}

// The callback connection, joined at the first callback; false when the
// session has none.
bool HostCallbackRunner::start_locked() {
  if (!started_ && !failed_) {
    auto conn = session_.join(proto::kJoinCallbacks);
    if (conn) {
      started_ = true;
      std::thread([this, c = std::move(conn)]() mutable { serve(std::move(c)); }).detach();
    } else {
      failed_ = true;
    }
  }
  return !failed_;
}

uint64_t HostCallbackRunner::add(std::function<void()> fn, uint16_t device, uint64_t stream) {
  return add_pending(Pending{[fn = std::move(fn)](std::span<uint8_t>) { fn(); }, device, stream});
}

uint64_t HostCallbackRunner::add_staged(std::function<void(std::span<uint8_t>)> fn, uint16_t device) {
  return add_pending(Pending{std::move(fn), device, 0});
}

uint64_t HostCallbackRunner::add_pending(Pending p) {
  std::lock_guard lock(mutex_);
  if (!start_locked()) return 0;
  uint64_t id = next_id_++;
  pending_.emplace(id, std::move(p));
  return id;
}

uint64_t HostCallbackRunner::add_notification(std::function<void(cudaAsyncNotificationInfo_t&)> fn) {
  std::lock_guard lock(mutex_);
  if (!start_locked()) return 0;
  uint64_t id = next_id_++;
  notifications_.emplace(id, std::move(fn));
  return id;
}

void HostCallbackRunner::drop_notification(uint64_t id) {
  std::lock_guard lock(mutex_);
  notifications_.erase(id);
}

bool HostCallbackRunner::in_notification() { return t_in_notification; }

void HostCallbackRunner::run_notification(proto::Reader& r) {
  auto id = r.get<uint64_t>();
  auto info = r.get<cudaAsyncNotificationInfo_t>();
  r.expect_end();
  std::function<void(cudaAsyncNotificationInfo_t&)> fn;
  {
    std::lock_guard lock(mutex_);
    // Unregistered since the worker sent it: not delivered.
    if (auto it = notifications_.find(id); it != notifications_.end()) fn = it->second;
  }
  if (!fn) return;
  server_order::callback_starts();
  t_in_notification = true;
  fn(info);
  t_in_notification = false;
  server_order::callback_ended();
}

void HostCallbackRunner::drop(uint64_t id) {
  std::lock_guard lock(mutex_);
  pending_.erase(id);
}

void HostCallbackRunner::serve(std::unique_ptr<transport::Connection> conn) {
  // A graph's host node may call the server while the graph's stream waits for it.
  Lane::unnumbered_on_this_thread();
  MoveGate::mark_callback_thread();
  try {
    std::vector<uint8_t> args, bytes;
    for (;;) {
      auto h = proto::recv_header(*conn);
      proto::recv_args(*conn, h, args);
      if (h.op == proto::kOpAsyncNotification && h.payload_len == 0) {
        proto::Reader r(args);
        run_notification(r);
        proto::send_frame(*conn, proto::FrameHeader{.op = proto::kOpAsyncNotification}, {});
        continue;
      }
      if (h.op != proto::kOpHostCallback) throw proto::DecodeError("not a due callback");
      proto::Reader r(args);
      auto id = r.get<uint64_t>();
      auto seq = r.get<uint64_t>();
      auto wanted = r.get<uint64_t>();
      r.expect_end();
      // A staged copy's bytes: those sent (a download), or room for those asked for.
      if (h.payload_len && wanted) throw proto::DecodeError("a callback with bytes both ways");
      bytes.assign(h.payload_len + wanted, 0);
      if (h.payload_len) conn->recv(bytes.data(), bytes.size());
      Pending p{};
      {
        std::lock_guard lock(mutex_);
        auto it = pending_.find(id);
        // Sequence 0: a graph's host node ran it, and may run it again.
        if (it != pending_.end() && seq == 0) {
          p = it->second;
        } else if (it != pending_.end()) {
          p = std::move(it->second);
          pending_.erase(it);
        }
      }
      if (p.fn) {
        // Copies queued before the callback on its stream are in place.
        session_.wait_background_copies(seq, p.device, p.stream);
        server_order::callback_starts();
        p.fn(bytes);
        server_order::callback_ended();
      }
      iovec upload{bytes.data(), bytes.size()};
      proto::send_frame(*conn, proto::FrameHeader{.op = proto::kOpHostCallback}, {}, {&upload, wanted ? 1u : 0u});
    }
  } catch (const std::exception& e) {
    if (!session_.dead()) RGPU_LOG(warn, "host callbacks stop: %s", e.what());
    std::lock_guard lock(mutex_);
    failed_ = true;
  }
}

}  // namespace rgpu::client
