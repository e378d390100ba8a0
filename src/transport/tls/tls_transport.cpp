// TLS: TCP connections carrying TLS 1.3 (OpenSSL); connection setup and the
// factories for the transport's parts.
#include <algorithm>
#include <chrono>

#include "transport/tcp/tcp_connect.hpp"
#include "transport/tls/tls_connection.hpp"
#include "transport/tls/tls_listener.hpp"

namespace rgpu::transport {
namespace {

class TlsClientTransport final : public Transport {
 public:
  explicit TlsClientTransport(TlsContext ctx) : ctx_(std::move(ctx)) {}
  std::string name() const override { return "tls"; }

  std::unique_ptr<Connection> connect(const Endpoint& where, int timeout_ms) override {
    const auto start = std::chrono::steady_clock::now();
    int fd = tcp_connect(where, timeout_ms);
    auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    return std::make_unique<TlsConnection>(fd, ctx_, where.host,
                                           std::max<int>(1, timeout_ms - static_cast<int>(spent.count())));
  }
  std::unique_ptr<Listener> listen(const Endpoint&) override {
    throw TransportError("a TLS client transport does not listen");
  }
  std::unique_ptr<Connection> adopt(int) override { throw TransportError("a TLS client transport adopts nothing"); }

 private:
  TlsContext ctx_;
};

class TlsServerTransport final : public Transport {
 public:
  explicit TlsServerTransport(TlsContext ctx) : ctx_(std::move(ctx)) {}
  std::string name() const override { return "tls"; }

  std::unique_ptr<Connection> connect(const Endpoint&, int) override {
    throw TransportError("a TLS server transport does not connect");
  }
  std::unique_ptr<Listener> listen(const Endpoint& where) override {
    return std::make_unique<TlsListener>(where, ctx_);
  }
  std::unique_ptr<Connection> adopt(int handle) override { return std::make_unique<TlsConnection>(handle, ctx_); }

 private:
  TlsContext ctx_;
};

}  // namespace

std::unique_ptr<Transport> make_tls_client_transport(const TlsSettings& settings) {
  return std::make_unique<TlsClientTransport>(make_tls_client_context(settings));
}

std::unique_ptr<Transport> make_tls_server_transport(const TlsSettings& settings) {
  return std::make_unique<TlsServerTransport>(make_tls_server_context(settings));
}

}  // namespace rgpu::transport
