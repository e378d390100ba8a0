#include "client/core/heartbeat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/core/session.hpp"
#include "common/log.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

constexpr int kDefaultTimeoutMs = 30000;

int timeout_from_environment() {
  const char* text = std::getenv("RGPU_PEER_TIMEOUT");
  if (!text || !*text) return kDefaultTimeoutMs;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end || seconds < 0 || seconds > 86400) {
    RGPU_LOG(warn, "RGPU_PEER_TIMEOUT=%s is not a number of seconds: %d s", text, kDefaultTimeoutMs / 1000);
    return kDefaultTimeoutMs;
  }
  return static_cast<int>(seconds * 1000);
}

}  // namespace

std::unique_ptr<Heartbeat> Heartbeat::start(Session& session) {
  const int timeout_ms = timeout_from_environment();
  if (timeout_ms == 0) return nullptr;
  auto conn = session.join(proto::kJoinHeartbeats);
  if (!conn) return nullptr;
  return std::make_unique<Heartbeat>(session, std::move(conn), timeout_ms);
}

Heartbeat::Heartbeat(Session& session, std::unique_ptr<transport::Connection> conn, int timeout_ms)
    : session_(session), conn_(std::move(conn)), timeout_ms_(timeout_ms), thread_([this] { run(); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  conn_->shutdown();
  thread_.join();
}

void Heartbeat::run() {
  // Until the worker says its own timeout, the client's alone counts.
  int timeout_ms = timeout_ms_;
  try {
    std::vector<uint8_t> args;
    for (;;) {
      proto::send_frame(*conn_, proto::FrameHeader{.op = proto::kOpHeartbeat}, {});
      if (!conn_->wait_readable(timeout_ms)) {
        char why[96];
        snprintf(why, sizeof why, "no word from the server for %g s (peer timeout)", timeout_ms / 1000.0);
        session_.lost(why);
        return;
      }
      auto h = proto::recv_header(*conn_);
      proto::recv_args(*conn_, h, args);
      if (h.op != proto::kOpHeartbeat || h.payload_len != 0) throw proto::DecodeError("not a heartbeat");
      proto::Reader r(args);
      const auto server_ms = static_cast<int>(std::min<uint32_t>(r.get<uint32_t>(), 86400000));
      timeout_ms = server_ms ? std::min(timeout_ms_, server_ms) : timeout_ms_;
      std::unique_lock lock(mutex_);
      if (stop_.wait_for(lock, std::chrono::milliseconds(std::max(1, timeout_ms / 4)), [&] { return stopping_; }))
        return;
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!stopping_) session_.lost(e.what());
  }
}

}  // namespace rgpu::client
