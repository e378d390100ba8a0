#include "transport/tcp/tcp_connect.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/tcp/tcp_socket_options.hpp"

namespace rgpu::transport {
namespace {

// Non-blocking connect so an unreachable server fails within the timeout
// instead of the kernel's minutes-long default.
int connect_with_timeout(const addrinfo* ai, int timeout_ms, std::string& why) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    why = strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    rc = ::poll(&pfd, 1, timeout_ms);
    if (rc == 0) {
      why = "timed out";
      ::close(fd);
      return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    rc = err == 0 ? 0 : -1;
    errno = err;
  }
  if (rc != 0) {
    why = strerror(errno);
    ::close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  tune_tcp_socket(fd);
  return fd;
}

}  // namespace

int tcp_connect(const Endpoint& where, int timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(where.port);
  if (int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw TransportError("cannot resolve " + where.host + ": " + gai_strerror(rc));
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) fd = connect_with_timeout(ai, timeout_ms, why);
  freeaddrinfo(res);
  if (fd < 0) throw TransportError("cannot connect to " + where.to_string() + ": " + why);
  return fd;
}

}  // namespace rgpu::transport
