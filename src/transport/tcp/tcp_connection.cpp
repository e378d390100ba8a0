#include "transport/tcp/tcp_connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace rgpu::transport {

void tune_tcp_socket(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A peer that vanishes without closing (power loss, network cut) must turn
  // into an error within seconds, not hang a CUDA call forever; a peer that
  // is only busy (a long kernel) still answers keepalives.
  int idle = 5, interval = 2, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  unsigned user_timeout_ms = 15000;
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

namespace {
constexpr size_t kReadBuffer = 64 * 1024;
}

TcpConnection::TcpConnection(int fd) : fd_(fd), buffer_(kReadBuffer) {}

TcpConnection::~TcpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpConnection::send(std::span<const iovec> parts, bool more) {
  std::vector<iovec> iov(parts.begin(), parts.end());
  size_t first = 0;
  while (first < iov.size()) {
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
    // MSG_NOSIGNAL: a dead peer must be an error, not a SIGPIPE in the application.
    ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw TransportError(std::string("send failed: ") + strerror(errno));
    }
    size_t left = static_cast<size_t>(n);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (first < iov.size()) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

void TcpConnection::recv(void* dst, size_t len) {
  auto p = static_cast<char*>(dst);
  while (len > 0) {
    if (buffered_begin_ < buffered_end_) {
      size_t take = std::min(len, buffered_end_ - buffered_begin_);
      std::memcpy(p, buffer_.data() + buffered_begin_, take);
      buffered_begin_ += take;
      p += take;
      len -= take;
      continue;
    }
    bool direct = len >= buffer_.size();
    ssize_t n = ::recv(fd_, direct ? p : buffer_.data(), direct ? len : buffer_.size(), 0);
    if (n == 0) throw TransportError("connection closed by peer");
    if (n < 0) {
      if (errno == EINTR) continue;
      throw TransportError(std::string("receive failed: ") + strerror(errno));
    }
    if (direct) {
      p += n;
      len -= static_cast<size_t>(n);
    } else {
      buffered_begin_ = 0;
      buffered_end_ = static_cast<size_t>(n);
    }
  }
}

bool TcpConnection::wait_readable(int timeout_ms) {
  if (buffered_begin_ < buffered_end_) return true;
  pollfd pfd{fd_, POLLIN, 0};
  int r;
  do {
    r = ::poll(&pfd, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

void TcpConnection::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::string TcpConnection::peer() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return Endpoint{host, port}.to_string();
}

}  // namespace rgpu::transport
