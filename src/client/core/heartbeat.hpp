// Heartbeats between a session and its worker, over a connection of their
// own (so a long GPU call holds none up): the client sends one every
// quarter of the shorter peer timeout (its RGPU_PEER_TIMEOUT, default 30 s,
// and the server's peer-timeout), and the worker answers each. A server
// that does not answer within that shorter timeout is lost: every call
// blocked on it fails, as do later ones. A worker that hears nothing within
// its own timeout ends the session (session_watch.hpp).
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "transport/transport.hpp"

namespace rgpu::client {

class Session;

// Runs a move the scheduler asked of the session (`rgpu migrate`), which a
// heartbeat's answer brings: "" once moved, else why not. Set by the move
// room (client/move/session_move.hpp); none: such requests are refused.
using MoveRunner = std::string (*)(Session& session, const std::string& target);
void set_move_runner(MoveRunner runner);

class Heartbeat {
 public:
  // Null when the session cannot join a connection or RGPU_PEER_TIMEOUT is 0.
  static std::unique_ptr<Heartbeat> start(Session& session);
  // `timeout_ms`: the shorter of the client's and the server's, as the
  // first exchange (in start) learnt.
  Heartbeat(Session& session, std::unique_ptr<transport::Connection> conn, int timeout_ms);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void run();
  // A move the answer asked for, on a thread of its own (it ends this
  // heartbeat when it succeeds); a refusal goes back with the next heartbeat.
  void start_move(const std::string& target);

  Session& session_;
  std::unique_ptr<transport::Connection> conn_;
  const int timeout_ms_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::string note_;  // for the worker with the next heartbeat (what came of a move)
  std::thread thread_;
};

}  // namespace rgpu::client
