// Connections the daemon turns away itself (past the bounds on
// unauthenticated connections), without a worker and without ever blocking
// on the peer. A tcp client gets the challenge and a refused hello reply in
// one non-blocking send (they fit an empty socket buffer; if not, it is
// just closed), then the connection lingers briefly for the client to read
// them and hang up, since closing with the client's hello unread would reset
// the connection and lose the answer. A Unix socket client is closed at
// once: answering it would mean using rings in memory it provides.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "server/worker/peer_warnings.hpp"

namespace rgpu::server {

class Refusals {
 public:
  // Takes the descriptor. `kind` groups refusals for the log's rate limit.
  void refuse(int fd, std::string_view kind, const std::string& why);
  // Descriptors to watch for the client's hang-up.
  std::vector<int> descriptors() const;
  void on_readable(int fd);
  // Closes what waited long enough.
  void expire();

 private:
  struct Closing {
    int fd;
    std::chrono::steady_clock::time_point until;
  };
  void close_at(size_t i);
  std::vector<Closing> closing_;
  PeerWarnings warnings_{1};
};

}  // namespace rgpu::server
