// Ends a session that is idle too long (idle-timeout: no call for that
// long) or whose client went silent (peer-timeout: no heartbeat for that
// long, once the client started sending them). A thread of its own looks
// four times a second and calls `expire` once, with the reason.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "transport/transport.hpp"

namespace rgpu::server {

class JobLedger;

class SessionWatch {
 public:
  using Expire = std::function<void(const std::string& why, bool client_silent)>;
  // Timeouts in seconds; 0 turns one off.
  SessionWatch(int idle_timeout_s, int peer_timeout_s, Expire expire);
  ~SessionWatch();
  SessionWatch(const SessionWatch&) = delete;
  SessionWatch& operator=(const SessionWatch&) = delete;

  // A request starts or ends (on any connection of the session).
  void request_started();
  void request_ended();
  // A heartbeat came from the client.
  void heard_from_client();

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  static int64_t now_ms();

  const int idle_timeout_s_;
  const int peer_timeout_s_;
  const Expire expire_;
  std::atomic<int> busy_{0};
  std::atomic<int64_t> last_request_ms_;
  std::atomic<int64_t> last_heartbeat_ms_{0};  // 0: the client sends none
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

// Serves the session's heartbeat connection (client/core/heartbeat.hpp):
// answers each heartbeat with this server's peer timeout and tells `watch`.
// Returns when the connection ends.
// Each answer also hands the client a move the scheduler asked of this
// session in `ledger` (`rgpu migrate`), and a heartbeat may carry what came
// of one (a refusal), which the ledger keeps for `rgpu smi`.
void answer_heartbeats(transport::Connection& conn, SessionWatch& watch, int peer_timeout_s, JobLedger* ledger);

}  // namespace rgpu::server
