#include "client/core/heartbeat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
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

// One heartbeat and its answer; the effective timeout (the shorter of
// `own_ms` and the server's), or nullopt when the server said nothing
// within `wait_ms`.
std::optional<int> exchange(transport::Connection& conn, int own_ms, int wait_ms) {
  proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHeartbeat}, {});
  if (!conn.wait_readable(wait_ms)) return std::nullopt;
  std::vector<uint8_t> args;
  auto h = proto::recv_header(conn);
  proto::recv_args(conn, h, args);
  if (h.op != proto::kOpHeartbeat || h.payload_len != 0) throw proto::DecodeError("not a heartbeat");
  proto::Reader r(args);
  const auto server_ms = static_cast<int>(std::min<uint32_t>(r.get<uint32_t>(), 86400000));
  return server_ms ? std::min(own_ms, server_ms) : own_ms;
}

std::string silence(int timeout_ms) {
  char why[96];
  snprintf(why, sizeof why, "no word from the server for %g s (peer timeout)", timeout_ms / 1000.0);
  return why;
}

}  // namespace

std::unique_ptr<Heartbeat> Heartbeat::start(Session& session) {
  const int own_ms = timeout_from_environment();
  if (own_ms == 0) return nullptr;
  auto conn = session.join(proto::kJoinHeartbeats);
  if (!conn) return nullptr;
  // The first exchange before the session is used, so that the server's
  // timeout counts from the first call on.
  auto timeout_ms = exchange(*conn, own_ms, own_ms);
  if (!timeout_ms) throw transport::TransportError(silence(own_ms));
  return std::make_unique<Heartbeat>(session, std::move(conn), *timeout_ms);
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
  try {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        if (stop_.wait_for(lock, std::chrono::milliseconds(std::max(1, timeout_ms_ / 4)), [&] { return stopping_; }))
          return;
      }
      if (!exchange(*conn_, timeout_ms_, timeout_ms_)) {
        session_.lost(silence(timeout_ms_).c_str());
        return;
      }
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!stopping_) session_.lost(e.what());
  }
}

}  // namespace rgpu::client
