// A connected TCP socket as an rgpu Connection.
#pragma once
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::transport {

class TcpConnection final : public Connection {
 public:
  explicit TcpConnection(int fd);
  ~TcpConnection() override;
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  std::string peer() const override;

 private:
  int fd_;
  // Small reads (headers, arguments, short payloads) come out of one
  // receive; large ones go straight to their destination.
  std::vector<char> buffer_;
  size_t buffered_begin_ = 0, buffered_end_ = 0;
};

// Latency matters more than segment count for small calls.
void tune_tcp_socket(int fd);

}  // namespace rgpu::transport
