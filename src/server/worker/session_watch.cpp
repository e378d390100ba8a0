#include "server/worker/session_watch.hpp"

#include "protocol/frame_io.hpp"
#include "protocol/ops.hpp"
#include "server/pool/job_ledger.hpp"

namespace rgpu::server {

SessionWatch::SessionWatch(int idle_timeout_s, int peer_timeout_s, Expire expire)
    : idle_timeout_s_(idle_timeout_s), peer_timeout_s_(peer_timeout_s), expire_(std::move(expire)),
      last_request_ms_(now_ms()) {
  if (idle_timeout_s_ > 0 || peer_timeout_s_ > 0) thread_ = std::thread([this] { run(); });
}

SessionWatch::~SessionWatch() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t SessionWatch::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

void SessionWatch::request_started() {
  busy_.fetch_add(1);
  last_request_ms_ = now_ms();
}

void SessionWatch::request_ended() {
  last_request_ms_ = now_ms();
  busy_.fetch_sub(1);
}

void SessionWatch::heard_from_client() { last_heartbeat_ms_ = now_ms(); }

void SessionWatch::run() {
  std::unique_lock lock(mutex_);
  while (!stop_.wait_for(lock, std::chrono::milliseconds(250), [&] { return stopping_; })) {
    const int64_t now = now_ms();
    const int64_t heartbeat = last_heartbeat_ms_;
    if (peer_timeout_s_ > 0 && heartbeat != 0 && now - heartbeat > peer_timeout_s_ * 1000LL) {
      expire_("no word from the client for " + std::to_string(peer_timeout_s_) + " s (peer-timeout)", true);
      return;
    }
    if (idle_timeout_s_ > 0 && busy_ == 0 && now - last_request_ms_ > idle_timeout_s_ * 1000LL) {
      expire_("the session made no call for " + std::to_string(idle_timeout_s_) + " s (idle-timeout)", false);
      return;
    }
  }
}

void answer_heartbeats(transport::Connection& conn, SessionWatch& watch, int peer_timeout_s, JobLedger* ledger) {
  // A note is one short string (the ledger keeps 255 bytes of it).
  constexpr uint32_t kMaxNote = 4 + 1024;
  std::vector<uint8_t> args;
  try {
    for (;;) {
      auto h = proto::recv_header(conn);
      if (h.op != proto::kOpHeartbeat || h.args_len > kMaxNote || h.payload_len != 0)
        throw proto::DecodeError("not a heartbeat");
      proto::recv_args(conn, h, args);
      if (!args.empty()) {
        proto::Reader r(args);
        std::string note = r.get_string();
        r.expect_end();
        if (ledger) ledger->note_move(getpid(), note);
      }
      watch.heard_from_client();
      proto::Writer answer;
      answer.put<uint32_t>(static_cast<uint32_t>(peer_timeout_s) * 1000);
      answer.put_string(ledger ? ledger->take_move(getpid()) : "");
      proto::send_frame(conn, proto::FrameHeader{.op = proto::kOpHeartbeat}, answer.bytes());
    }
  } catch (const transport::TransportError&) {
    // the session ended, or its client went
  }
}

}  // namespace rgpu::server
