#include "client/core/host_callback_runner.hpp"

#include <thread>

#include "client/core/session.hpp"
#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {

uint64_t HostCallbackRunner::add(std::function<void()> fn, uint16_t device, uint64_t stream) {
  std::lock_guard lock(mutex_);
  if (!started_ && !failed_) {
    auto conn = session_.join(proto::kJoinCallbacks);
    if (conn) {
      started_ = true;
      std::thread([this, c = std::move(conn)]() mutable { serve(std::move(c)); }).detach();
    } else {
      failed_ = true;
    }
  }
  if (failed_) return 0;
  uint64_t id = next_id_++;
  pending_.emplace(id, Pending{std::move(fn), device, stream});
  return id;
}

void HostCallbackRunner::drop(uint64_t id) {
  std::lock_guard lock(mutex_);
  pending_.erase(id);
}

void HostCallbackRunner::serve(std::unique_ptr<transport::Connection> conn) {
  try {
    std::vector<uint8_t> args;
    for (;;) {
      auto h = proto::recv_header(*conn);
      proto::recv_args(*conn, h, args);
      if (h.op != proto::kOpHostCallback || h.payload_len != 0) throw proto::DecodeError("not a due callback");
      proto::Reader r(args);
      auto id = r.get<uint64_t>();
      auto seq = r.get<uint64_t>();
      r.expect_end();
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
        p.fn();
      }
      proto::send_frame(*conn, proto::FrameHeader{.op = proto::kOpHostCallback}, {});
    }
  } catch (const std::exception& e) {
    if (!session_.dead()) RGPU_LOG(warn, "host callbacks stop: %s", e.what());
    std::lock_guard lock(mutex_);
    failed_ = true;
  }
}

}  // namespace rgpu::client
