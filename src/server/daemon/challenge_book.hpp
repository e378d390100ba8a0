// The admin endpoint's challenges: each request that needs the job key first
// takes a fresh random challenge, then proves the key over it and what it
// asks (proto::request_proof). A challenge serves once and for a minute, so
// a request seen on the wire cannot be sent again; the book keeps at most
// kMaxOpen, forgetting the oldest, so asking for challenges costs the
// server nothing that grows.
#pragma once
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "protocol/auth.hpp"

namespace rgpu::server {

class ChallengeBook {
 public:
  static constexpr size_t kMaxOpen = 4096;
  static constexpr std::chrono::seconds kLifetime{60};

  // A new challenge, in hex.
  std::string issue(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // The challenge `hex` names if it is open, closing it; none when it is
  // unknown, used or expired.
  std::optional<proto::Nonce> take(const std::string& hex,
                                   std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  struct Open {
    proto::Nonce nonce;
    std::chrono::steady_clock::time_point issued;
  };
  std::mutex mutex_;
  std::deque<Open> open_;  // oldest first
};

}  // namespace rgpu::server
