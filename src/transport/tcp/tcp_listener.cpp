#include "transport/tcp/tcp_listener.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/socket/socket_connection.hpp"
#include "transport/tcp/tcp_socket_options.hpp"

namespace rgpu::transport {

TcpListener::TcpListener(const Endpoint& where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string port = std::to_string(where.port);
  const char* host = where.host.empty() || where.host == "*" ? nullptr : where.host.c_str();
  if (int rc = getaddrinfo(host, port.c_str(), &hints, &res); rc != 0)
    throw TransportError("cannot resolve " + where.to_string() + ": " + gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // The kernel's most: a burst of connections (a flood, or a job's ranks
    // starting at once) waits to be accepted instead of having SYNs dropped,
    // which costs a client a second per retry.
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      fd_ = fd;
      break;
    }
    why = strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(res);
  if (fd_ < 0) throw TransportError("cannot listen on " + where.to_string() + ": " + why);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpListener::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::unique_ptr<Connection> TcpListener::accept() { return std::make_unique<SocketConnection>(accept_socket()); }

int TcpListener::accept_socket() {
  for (;;) {
    int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      tune_tcp_socket(fd);
      return fd;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    throw TransportError(std::string("accept failed: ") + strerror(errno));
  }
}

Endpoint TcpListener::local_endpoint() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  uint16_t port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                           : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return Endpoint{ss.ss_family == AF_INET6 ? "::" : "0.0.0.0", port};
}

}  // namespace rgpu::transport
