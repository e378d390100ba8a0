// A TCP listener whose connections speak TLS (server side). accept() does
// not handshake: the connection does at first use (TlsConnection).
#pragma once
#include "transport/tcp/tcp_listener.hpp"
#include "transport/tls/tls_context.hpp"

namespace rgpu::transport {

class TlsListener final : public Listener {
 public:
  TlsListener(const Endpoint& where, TlsContext ctx) : tcp_(where), ctx_(std::move(ctx)) {}

  std::unique_ptr<Connection> accept() override;
  void shutdown() override { tcp_.shutdown(); }
  int native_handle() const override { return tcp_.native_handle(); }
  Endpoint local_endpoint() const override { return tcp_.local_endpoint(); }

 private:
  TcpListener tcp_;
  TlsContext ctx_;
};

}  // namespace rgpu::transport
