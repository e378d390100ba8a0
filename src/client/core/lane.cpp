#include "client/core/lane.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "client/core/server_order.hpp"
#include "client/core/session.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {
thread_local bool t_unnumbered = false;
}

void Lane::unnumbered_on_this_thread() { t_unnumbered = true; }

void Lane::print_device_output(const proto::FrameHeader& h) {
  std::vector<uint8_t> args;
  proto::recv_args(*conn_, h, args);
  proto::Reader r(args);
  auto fd = r.get<uint8_t>();
  r.expect_end();
  std::string text(h.payload_len, '\0');
  conn_->recv(text.data(), text.size());
  // Through the application's own stdio buffers, so that its lines and the
  // kernels' keep their order.
  fwrite(text.data(), 1, text.size(), fd == 2 ? stderr : stdout);
}

cudaError_t Lane::read_downloads(uint64_t seq) {
  std::vector<uint8_t> args;
  cudaError_t first = cudaSuccess;
  for (;;) {
    Download d;
    {
      std::lock_guard lock(downloads_mutex_);
      if (downloads_.empty() || downloads_.front().seq >= seq) return first;
      d = downloads_.front();
    }
    cudaError_t e = receive_one(args, d.dst, d.n, false);
    if (session_.dead()) return e;
    if (e == cudaSuccess) session_.mark_idle(d.seq, d.device, d.stream);
    if (first == cudaSuccess) first = e;
    {
      std::lock_guard lock(downloads_mutex_);
      downloads_.pop_front();
    }
    session_.download_read();
    downloads_read_.notify_all();
  }
}

cudaError_t Lane::receive_reply(std::vector<uint8_t>& reply_args, void* dst, size_t n, bool report_deferred) {
  // The worker answers in order: downloads posted before come first; their
  // error is this lane's deferred one.
  if (!downloads_.empty())
    if (cudaError_t e = read_downloads(~uint64_t{0}); e && pending_deferred_ == cudaSuccess) pending_deferred_ = e;
  return receive_one(reply_args, dst, n, report_deferred);
}

cudaError_t Lane::receive_one(std::vector<uint8_t>& reply_args, void* dst, size_t n, bool report_deferred) {
  auto h = proto::recv_header(*conn_);
  for (; h.op == proto::kOpDeviceOutput; h = proto::recv_header(*conn_)) print_device_output(h);
  if (h.op == proto::kOpGoodbye) {
    proto::recv_args(*conn_, h, reply_args);
    proto::Reader r(reply_args);
    return session_.lost(("the server ended the session: " + r.get_string()).c_str());
  }
  if (h.op != proto::kOpReply) return session_.lost("unexpected frame instead of a reply");
  server_order::reply_received();
  proto::recv_args(*conn_, h, reply_args);
  if (reply_args.size() < sizeof(proto::ReplyPrefix)) return session_.lost("short reply");
  proto::ReplyPrefix prefix;
  std::memcpy(&prefix, reply_args.data(), sizeof prefix);
  reply_args.erase(reply_args.begin(), reply_args.begin() + sizeof prefix);
  if (h.payload_len != 0) {
    // Only call_into asks for a payload, and then exactly n bytes and the
    // copy's final status follow.
    if (h.payload_len != n + sizeof(int32_t)) return session_.lost("reply payload of unexpected size");
    conn_->recv(dst, n);
    int32_t final_status;
    conn_->recv(&final_status, sizeof final_status);
    if (prefix.status == cudaSuccess) prefix.status = final_status;
  }
  if (prefix.deferred != cudaSuccess && pending_deferred_ == cudaSuccess)
    pending_deferred_ = static_cast<cudaError_t>(prefix.deferred);
  if (prefix.status != cudaSuccess) return static_cast<cudaError_t>(prefix.status);
  if (!report_deferred) return cudaSuccess;
  return std::exchange(pending_deferred_, cudaSuccess);
}

template <typename F>
cudaError_t Lane::exchange(uint64_t seq, uint64_t* used, F&& f) {
  std::lock_guard lock(mutex_);
  if (session_.dead()) return cudaErrorDevicesUnavailable;
  // Numbered under the lock: a lane's requests leave in number order.
  if (seq == 0 && !t_unnumbered) seq = session_.next_seq();
  if (used) *used = seq;
  server_order::request_sent();
  try {
    return f(seq);
  } catch (const std::exception& e) {
    return session_.lost(e.what());
  }
}

cudaError_t Lane::call(uint16_t op, uint16_t device, std::span<const uint8_t> args, std::span<const iovec> payload,
                       std::vector<uint8_t>& reply_args, bool report_deferred, uint64_t* used) {
  return exchange(0, used, [&](uint64_t seq) {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .seq = seq}, args, payload);
    return receive_reply(reply_args, nullptr, 0, report_deferred);
  });
}

cudaError_t Lane::call_into(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst, size_t n,
                            std::vector<uint8_t>& reply_args, uint64_t* used) {
  return exchange(0, used, [&](uint64_t seq) {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .seq = seq}, args);
    return receive_reply(reply_args, dst, n, true);
  });
}

cudaError_t Lane::call_with_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int fd,
                               std::vector<uint8_t>& reply_args, uint64_t* used) {
  return exchange(0, used, [&](uint64_t seq) {
    proto::FrameHeader h{.op = op,
                         .device = device,
                         .args_len = static_cast<uint32_t>(args.size()),
                         .flags = proto::kFlagDescriptor,
                         .seq = seq};
    iovec parts[2] = {{&h, sizeof h}, {const_cast<uint8_t*>(args.data()), args.size()}};
    conn_->send_with_fd(parts, fd);
    return receive_reply(reply_args, nullptr, 0, true);
  });
}

cudaError_t Lane::call_taking_fd(uint16_t op, uint16_t device, std::span<const uint8_t> args, int* fd,
                                 std::vector<uint8_t>& reply_args, uint64_t* used) {
  *fd = -1;
  return exchange(0, used, [&](uint64_t seq) {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .seq = seq}, args);
    cudaError_t e = receive_reply(reply_args, nullptr, 0, false);
    if (e != cudaSuccess) return e;
    // The worker sends the descriptor ahead of its reply, so it is here now;
    // it is taken even when an earlier asynchronous error is what the call
    // returns, so that no later call finds it.
    *fd = conn_->take_fd();
    if (*fd < 0) return session_.lost("a reply came without the descriptor it carries");
    cudaError_t earlier = std::exchange(pending_deferred_, cudaSuccess);
    if (earlier != cudaSuccess) {
      close(*fd);
      *fd = -1;
    }
    return earlier;
  });
}

cudaError_t Lane::post_answered(uint16_t op, uint16_t device, std::span<const uint8_t> args,
                               std::span<const iovec> payload, void* dst, size_t n, uint64_t seq_in,
                               unsigned parts_before) {
  std::vector<uint8_t> reply;
  return exchange(seq_in, nullptr, [&](uint64_t seq) {
    const uint32_t flags = proto::kFlagAsync | proto::kFlagAnswer | proto::group_flags(parts_before);
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .flags = flags, .seq = seq},
                      args, payload);
    return receive_reply(reply, dst, n, true);
  });
}

cudaError_t Lane::post_download(uint16_t op, uint16_t device, std::span<const uint8_t> args, void* dst, size_t n,
                                uint64_t stream) {
  return exchange(0, nullptr, [&](uint64_t seq) {
    proto::send_frame(*conn_,
                      proto::FrameHeader{.op = op, .device = device, .flags = proto::kFlagAsync | proto::kFlagAnswer,
                                         .seq = seq},
                      args);
    {
      std::lock_guard lock(downloads_mutex_);
      downloads_.push_back({seq, device, stream, dst, n});
    }
    session_.download_posted();
    return cudaSuccess;
  });
}

cudaError_t Lane::drain(uint64_t seq) {
  for (;;) {
    {
      std::unique_lock lock(downloads_mutex_);
      if (downloads_.empty() || downloads_.front().seq >= seq || session_.dead()) return cudaSuccess;
    }
    // Free: read them here. Held: its holder reads them before its own
    // reply (this wakes when it does), unless it only sends; look again.
    if (std::unique_lock lane(mutex_, std::try_to_lock); lane.owns_lock()) {
      try {
        return read_downloads(seq);
      } catch (const std::exception& e) {
        return session_.lost(e.what());
      }
    }
    std::unique_lock lock(downloads_mutex_);
    downloads_read_.wait_for(lock, std::chrono::microseconds(200));
  }
}

cudaError_t Lane::post(uint16_t op, uint16_t device, std::span<const uint8_t> args, std::span<const iovec> payload) {
  return exchange(0, nullptr, [&](uint64_t seq) {
    proto::send_frame(*conn_, proto::FrameHeader{.op = op, .device = device, .flags = proto::kFlagAsync, .seq = seq},
                      args, payload);
    return cudaSuccess;
  });
}

}  // namespace rgpu::client
