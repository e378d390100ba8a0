// A connected stream socket (TCP or Unix) as an rgpu Connection.
#pragma once
#include <deque>
#include <vector>

#include "transport/transport.hpp"

namespace rgpu::transport {

class SocketConnection final : public Connection {
 public:
  explicit SocketConnection(int fd);
  ~SocketConnection() override;
  SocketConnection(const SocketConnection&) = delete;
  SocketConnection& operator=(const SocketConnection&) = delete;

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  std::string peer() const override;
  void send_with_fd(std::span<const iovec> parts, int fd) override;
  int take_fd() override;
  bool passes_descriptors() const override;

 private:
  ssize_t receive(char* into, size_t len);

  int fd_;
  // Small reads (headers, arguments, short payloads) come out of one
  // receive; large ones go straight to their destination.
  std::vector<char> buffer_;
  size_t buffered_begin_ = 0, buffered_end_ = 0;
  // Descriptors that arrived with data (Unix sockets), oldest first.
  std::deque<int> fds_;
};

}  // namespace rgpu::transport
