// One deadline over a connection's whole hello (or join): adoption, the TLS
// handshake, the challenge, every byte of the hello and admission. A peer
// that sends slowly, or a header promising bytes it never sends, is cut off
// when it passes, however its bytes are spread out.
#pragma once
#include <chrono>

namespace rgpu::server {

class HelloDeadline {
 public:
  // Shuts socket `fd` down (both ways) unless disarmed within `timeout`. A
  // shut-down socket wakes every transport's blocked read or write on it:
  // tcp and TLS at once, an shm ring wait within its liveness period (the
  // ring checks its socket), an shm ring offer not yet made at once.
  HelloDeadline(int fd, std::chrono::milliseconds timeout);
  ~HelloDeadline() { disarm(); }
  HelloDeadline(const HelloDeadline&) = delete;
  HelloDeadline& operator=(const HelloDeadline&) = delete;

  // The hello is over: the socket stays up. Must come before `fd` closes.
  void disarm();
  // Whether the deadline passed and the socket was shut down.
  bool expired() const;

 private:
  int fd_;
  std::chrono::steady_clock::time_point when_;
  bool expired_ = false;
  friend class DeadlineWatch;
};

}  // namespace rgpu::server
