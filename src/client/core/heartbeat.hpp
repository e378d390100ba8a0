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
#include <thread>

#include "transport/transport.hpp"

namespace rgpu::client {

class Session;

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

  Session& session_;
  std::unique_ptr<transport::Connection> conn_;
  const int timeout_ms_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rgpu::client
