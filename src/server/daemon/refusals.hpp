// Connections the daemon turns away itself (max-sessions), without a
// worker: it answers the handshake with the reason, then waits briefly for
// the client to read it and hang up, since closing with the client's hello
// unread would reset the connection and lose the answer. A Unix socket
// client (shm) is answered once its shared rings have arrived, so the
// daemon never waits for them.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::server {

class Refusals {
 public:
  // Takes the descriptor; answers the client as soon as it can.
  void refuse(int fd, const std::string& why);
  // Descriptors to watch for the client's hello and hang-up.
  std::vector<int> descriptors() const;
  void on_readable(int fd);
  // Closes what waited long enough.
  void expire();

 private:
  struct Closing {
    int fd;
    std::string why;
    std::unique_ptr<transport::Connection> answered;  // null until answered
    std::chrono::steady_clock::time_point until;
  };
  // Sends the challenge and a refused hello reply.
  static void answer(Closing& c);
  void close_at(size_t i);
  std::vector<Closing> closing_;
};

}  // namespace rgpu::server
