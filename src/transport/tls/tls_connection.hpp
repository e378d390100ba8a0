// A TLS 1.3 session over a connected TCP socket. Like every rgpu connection
// it is used by one thread at a time; shutdown() may come from any thread.
#pragma once
#include <openssl/ssl.h>

#include <memory>
#include <vector>

#include "transport/tls/tls_context.hpp"

namespace rgpu::transport {

class TlsConnection final : public Connection {
 public:
  // Client side (takes fd): handshakes at once, within timeout_ms; the
  // server's certificate must chain to the context's CA and name `host`.
  TlsConnection(int fd, TlsContext ctx, const std::string& host, int timeout_ms);
  // Server side (takes fd): the handshake runs at first use, within
  // kServerHandshakeTimeoutMs, in the thread that serves the connection, so
  // whoever accepted it never waits on the peer.
  TlsConnection(int fd, TlsContext ctx);
  ~TlsConnection() override;
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  static constexpr int kServerHandshakeTimeoutMs = 5000;

  void send(std::span<const iovec> parts, bool more = false) override;
  void recv(void* dst, size_t len) override;
  bool wait_readable(int timeout_ms) override;
  void shutdown() override;
  int native_handle() const override { return fd_; }
  std::string peer() const override;
  void send_with_fd(std::span<const iovec> parts, int fd) override;
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }
  std::unique_ptr<Listener> listen_beside() const override;

  // Whether the kernel encrypts what this side sends and decrypts what it receives.
  bool kernel_sends() const;
  bool kernel_receives() const;

 private:
  void handshake(int timeout_ms);
  void finish_handshake();
  void write_all(const void* data, size_t len);
  void flush();
  void wait_for_data_briefly();

  int fd_;
  TlsContext ctx_;
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl_;
  bool established_ = false;
  // Small pieces of a send (headers, arguments) leave together, in one
  // record, with what follows them.
  std::vector<char> pending_;
};

}  // namespace rgpu::transport
