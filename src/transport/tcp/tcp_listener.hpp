// A listening TCP socket.
#pragma once
#include "transport/transport.hpp"

namespace rgpu::transport {

class TcpListener final : public Listener {
 public:
  explicit TcpListener(const Endpoint& where);
  ~TcpListener() override;
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  std::unique_ptr<Connection> accept() override;
  // The accepted socket itself, with rgpu's TCP options.
  int accept_socket();
  void shutdown() override;
  int native_handle() const override { return fd_; }
  Endpoint local_endpoint() const override;

 private:
  int fd_ = -1;
};

}  // namespace rgpu::transport
