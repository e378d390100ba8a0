#include "transport/tls/tls_connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "transport/poll_window.hpp"
#include "transport/socket/socket_address.hpp"
#include "transport/tls/tls_listener.hpp"

namespace rgpu::transport {
namespace {

using Clock = std::chrono::steady_clock;

// The most plain text one record carries.
constexpr size_t kRecordBytes = SSL3_RT_MAX_PLAIN_LENGTH;
// One SSL_write/SSL_read call at most (OpenSSL counts in int internally).
constexpr size_t kMaxCall = size_t{1} << 30;

bool is_ip_address(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// OpenSSL writes to the socket with write(): a peer that is gone would raise
// SIGPIPE in the application. The signal is blocked in this thread while
// OpenSSL writes, and one it raised is taken before unblocking.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (failed_ && !sigismember(&old_, SIGPIPE)) {
      timespec zero{};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  void failed() { failed_ = true; }

 private:
  sigset_t pipe_, old_;
  bool failed_ = false;
};

}  // namespace

TlsConnection::TlsConnection(int fd, TlsContext ctx, const std::string& host, int timeout_ms)
    : fd_(fd), ctx_(std::move(ctx)), ssl_(SSL_new(ctx_.get()), SSL_free) {
  if (!ssl_) {
    ::close(fd_);
    throw TransportError(tls_error("cannot start TLS"));
  }
  SSL_set_fd(ssl_.get(), fd_);
  SSL_set_connect_state(ssl_.get());
  // The certificate must name the host as the client named it.
  bool named = is_ip_address(host) ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), host.c_str()) == 1
                                   : SSL_set1_host(ssl_.get(), host.c_str()) == 1 &&
                                         SSL_set_tlsext_host_name(ssl_.get(), host.c_str()) == 1;
  if (!named) {
    ::close(fd_);
    throw TransportError(tls_error("cannot check certificates for the name '" + host + "'"));
  }
  try {
    handshake(timeout_ms);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

TlsConnection::TlsConnection(int fd, TlsContext ctx)
    : fd_(fd), ctx_(std::move(ctx)), ssl_(SSL_new(ctx_.get()), SSL_free) {
  if (!ssl_) {
    ::close(fd_);
    throw TransportError(tls_error("cannot start TLS"));
  }
  SSL_set_fd(ssl_.get(), fd_);
  SSL_set_accept_state(ssl_.get());
}

TlsConnection::~TlsConnection() {
  ssl_.reset();
  ::close(fd_);
}

void TlsConnection::handshake(int timeout_ms) {
  ERR_clear_error();
  const int flags = fcntl(fd_, F_GETFL);
  fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string failure;
  for (;;) {
    int r = SSL_do_handshake(ssl_.get());
    if (r == 1) break;
    int e = SSL_get_error(ssl_.get(), r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
      int n = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) continue;
      failure = "timed out";
    } else if (e == SSL_ERROR_ZERO_RETURN) {
      failure = "the peer closed the connection";
    } else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      failure = errno ? strerror(errno) : "the peer closed the connection";
    } else {
      long verify = SSL_get_verify_result(ssl_.get());
      // A server that answers with something else than a TLS record.
      const int reason = ERR_GET_REASON(ERR_peek_error());
      const bool not_tls = !SSL_is_server(ssl_.get()) &&
                           (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG);
      failure = tls_error("");
      if (verify != X509_V_OK) failure += std::string(" (certificate: ") + X509_verify_cert_error_string(verify) + ")";
      failure = failure.size() > 2 ? failure.substr(2) : "failed";
      if (not_tls) failure += " (the server does not speak TLS on this port)";
    }
    ERR_clear_error();
    throw TransportError("TLS handshake with " + peer() + ": " + failure);
  }
  fcntl(fd_, F_SETFL, flags);
  established_ = true;
}

void TlsConnection::finish_handshake() {
  if (!established_) handshake(kServerHandshakeTimeoutMs);
}

bool TlsConnection::kernel_sends() const { return BIO_get_ktls_send(SSL_get_wbio(ssl_.get())) > 0; }

bool TlsConnection::kernel_receives() const { return BIO_get_ktls_recv(SSL_get_rbio(ssl_.get())) > 0; }

void TlsConnection::write_all(const void* data, size_t len) {
  auto p = static_cast<const char*>(data);
  SigpipeBlocked blocked;
  while (len > 0) {
    size_t done = 0;
    int r = SSL_write_ex(ssl_.get(), p, std::min(len, kMaxCall), &done);
    if (r == 1) {
      p += done;
      len -= done;
      continue;
    }
    int e = SSL_get_error(ssl_.get(), r);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) continue;  // interrupted
    blocked.failed();
    std::string why = e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 ? strerror(errno) : tls_error("TLS");
    ERR_clear_error();
    throw TransportError("send failed: " + why);
  }
}

void TlsConnection::flush() {
  if (pending_.empty()) return;
  write_all(pending_.data(), pending_.size());
  pending_.clear();
}

void TlsConnection::send(std::span<const iovec> parts, bool more) {
  finish_handshake();
  for (const iovec& part : parts) {
    const char* p = static_cast<const char*>(part.iov_base);
    if (part.iov_len < kRecordBytes) {
      if (pending_.size() + part.iov_len > kRecordBytes) flush();
      pending_.insert(pending_.end(), p, p + part.iov_len);
    } else {
      flush();
      write_all(p, part.iov_len);
    }
  }
  if (!more) flush();
}

void TlsConnection::wait_for_data_briefly() {
  // Poll first (see poll_window.hpp), then sleep in the read.
  const auto window = poll_window();
  if (window.count() == 0 || SSL_has_pending(ssl_.get())) return;
  const auto until = Clock::now() + window;
  do {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0) return;
    std::this_thread::yield();
  } while (Clock::now() < until);
}

void TlsConnection::recv(void* dst, size_t len) {
  finish_handshake();
  auto p = static_cast<char*>(dst);
  while (len > 0) {
    wait_for_data_briefly();
    size_t got = 0;
    int r = SSL_read_ex(ssl_.get(), p, std::min(len, kMaxCall), &got);
    if (r == 1) {
      p += got;
      len -= got;
      continue;
    }
    int e = SSL_get_error(ssl_.get(), r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;  // interrupted
    if (e == SSL_ERROR_ZERO_RETURN) {
      ERR_clear_error();
      throw TransportError("connection closed by peer");
    }
    std::string why = e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 ? strerror(errno) : tls_error("TLS");
    ERR_clear_error();
    throw TransportError("receive failed: " + why);
  }
}

bool TlsConnection::wait_readable(int timeout_ms) {
  return SSL_has_pending(ssl_.get()) || socket_readable(fd_, timeout_ms);
}

void TlsConnection::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::string TlsConnection::peer() const { return socket_peer(fd_); }

void TlsConnection::send_with_fd(std::span<const iovec>, int) {
  throw TransportError("descriptors cannot travel over TLS");
}

std::unique_ptr<Listener> TlsConnection::listen_beside() const {
  return std::make_unique<TlsListener>(Endpoint{socket_local_ip(fd_), 0}, ctx_);
}

}  // namespace rgpu::transport
