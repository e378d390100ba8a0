#include "transport/socket/socket_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "transport/transport.hpp"

namespace rgpu::transport {

std::string socket_peer(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_UNIX) {
    return "local";
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return Endpoint{host, port}.to_string();
}

std::string peer_identity(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "unknown";
  char text[INET6_ADDRSTRLEN] = "";
  switch (ss.ss_family) {
    case AF_INET:
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, text, sizeof text);
      return "host " + std::string(text);
    case AF_INET6:
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, text, sizeof text);
      return "host " + std::string(text);
    case AF_UNIX: {
      ucred cred{};
      socklen_t n = sizeof cred;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) == 0) return "user " + std::to_string(cred.uid);
      return "unknown";
    }
    default:
      return "unknown";
  }
}

std::string socket_local_ip(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    throw TransportError(std::string("getsockname: ") + strerror(errno));
  char host[INET6_ADDRSTRLEN] = "";
  const void* addr = ss.ss_family == AF_INET6
                         ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr)
                         : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr);
  if ((ss.ss_family != AF_INET && ss.ss_family != AF_INET6) || !inet_ntop(ss.ss_family, addr, host, sizeof host))
    throw TransportError("not a TCP socket");
  return host;
}

bool socket_readable(int fd, int timeout_ms) {
  pollfd pfd{fd, POLLIN, 0};
  int r;
  do {
    r = ::poll(&pfd, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

}  // namespace rgpu::transport
