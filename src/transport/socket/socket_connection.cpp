#include "transport/socket/socket_connection.hpp"

#include "transport/poll_window.hpp"
#include "transport/socket/descriptor_passing.hpp"
#include "transport/socket/socket_address.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace rgpu::transport {


namespace {
constexpr size_t kReadBuffer = 64 * 1024;
}

SocketConnection::SocketConnection(int fd) : fd_(fd), buffer_(kReadBuffer) {}

SocketConnection::~SocketConnection() {
  if (fd_ >= 0) ::close(fd_);
  for (int fd : fds_) ::close(fd);
}

void SocketConnection::send(std::span<const iovec> parts, bool more) {
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

void SocketConnection::recv(void* dst, size_t len) {
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
    ssize_t n = receive(direct ? p : buffer_.data(), direct ? len : buffer_.size());
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

ssize_t SocketConnection::receive(char* into, size_t len) {
  // Poll first (see poll_window.hpp), then sleep in recvmsg.
  const auto window = poll_window();
  if (window.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + window;
    do {
      ssize_t n = receive_with_descriptors(fd_, {into, len}, fds_, MSG_DONTWAIT);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return n;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < until);
  }
  return receive_with_descriptors(fd_, {into, len}, fds_);
}

bool SocketConnection::wait_readable(int timeout_ms) {
  return buffered_begin_ < buffered_end_ || socket_readable(fd_, timeout_ms);
}

void SocketConnection::send_with_fd(std::span<const iovec> parts, int fd) {
  // The descriptor rides on the first byte; the rest follows as usual.
  if (parts.empty() || parts[0].iov_len == 0) throw TransportError("a descriptor needs data to travel with");
  if (!send_byte_with_descriptor(fd_, parts[0].iov_base, fd))
    throw TransportError(std::string("cannot pass a descriptor: ") + strerror(errno));
  std::vector<iovec> rest(parts.begin(), parts.end());
  rest[0].iov_base = static_cast<char*>(rest[0].iov_base) + 1;
  rest[0].iov_len -= 1;
  send(rest);
}

int SocketConnection::take_fd() {
  if (fds_.empty()) return -1;
  int fd = fds_.front();
  fds_.pop_front();
  return fd;
}

bool SocketConnection::passes_descriptors() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  return getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && ss.ss_family == AF_UNIX;
}

void SocketConnection::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::string SocketConnection::peer() const { return socket_peer(fd_); }

}  // namespace rgpu::transport
