#include "client/core/heartbeat.hpp"

#include <algorithm>
#include <atomic>
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

struct Answer {
  int timeout_ms;       // the shorter of ours and the server's
  std::string move_to;  // a move the scheduler asked; empty: none
};

// One heartbeat (with `note` for the worker, if any) and its answer, or
// nullopt when the server said nothing within `wait_ms`.
std::optional<Answer> exchange(transport::Connection& conn, int own_ms, int wait_ms, const std::string& note = "") {
  proto::Writer w;
  if (!note.empty()) w.put_string(note);
  proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHeartbeat}, w.bytes());
  if (!conn.wait_readable(wait_ms)) return std::nullopt;
  std::vector<uint8_t> args;
  auto h = proto::recv_header(conn);
  proto::recv_args(conn, h, args);
  if (h.op != proto::kOpHeartbeat || h.payload_len != 0) throw proto::DecodeError("not a heartbeat");
  proto::Reader r(args);
  const auto server_ms = static_cast<int>(std::min<uint32_t>(r.get<uint32_t>(), 86400000));
  Answer a{server_ms ? std::min(own_ms, server_ms) : own_ms, ""};
  if (r.remaining()) a.move_to = r.get_string();
  return a;
}

std::atomic<MoveRunner> g_move_runner{nullptr};
std::atomic<bool> g_moving{false};  // one move at a time in a process

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
  auto answer = exchange(*conn, own_ms, own_ms);
  if (!answer) throw transport::TransportError(silence(own_ms));
  return std::make_unique<Heartbeat>(session, std::move(conn), answer->timeout_ms);
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
      std::string note;
      {
        std::lock_guard lock(mutex_);
        note.swap(note_);
      }
      auto answer = exchange(*conn_, timeout_ms_, timeout_ms_, note);
      if (!answer) {
        session_.lost(silence(timeout_ms_).c_str());
        return;
      }
      if (!answer->move_to.empty()) start_move(answer->move_to);
    }
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!stopping_) session_.lost(e.what());
  }
}

void set_move_runner(MoveRunner runner) { g_move_runner.store(runner); }

void Heartbeat::start_move(const std::string& target) {
  MoveRunner runner = g_move_runner.load();
  if (!runner || g_moving.exchange(true)) {
    std::lock_guard lock(mutex_);
    note_ = runner ? "refused: another move of this application is under way" : "refused: this client cannot move";
    return;
  }
  std::thread([this, runner, target] {
    std::string why = runner(session_, target);
    // Moved, the session and this heartbeat are gone; refused, both stay.
    if (!why.empty()) {
      std::lock_guard lock(mutex_);
      note_ = "refused: " + why;
    }
    g_moving.store(false);
  }).detach();
}

}  // namespace rgpu::client
