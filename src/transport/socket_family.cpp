// Choosing the transport by what kind of socket a connection is.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "transport/shm/shm_listener.hpp"
#include "transport/tcp/tcp_listener.hpp"
#include "transport/transport.hpp"

namespace rgpu::transport {
namespace {

sockaddr_storage local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    throw TransportError(std::string("getsockname: ") + strerror(errno));
  return ss;
}

}  // namespace

std::unique_ptr<Connection> adopt_socket(int fd) {
  bool local = local_address(fd).ss_family == AF_UNIX;
  return (local ? make_shm_transport() : make_tcp_transport())->adopt(fd);
}

std::unique_ptr<Listener> Connection::listen_beside() const {
  sockaddr_storage ss = local_address(native_handle());
  if (ss.ss_family == AF_UNIX) {
    static std::atomic<int> counter{0};
    return std::make_unique<ShmListener>("@rgpu-join-" + std::to_string(getpid()) + "-" +
                                         std::to_string(counter++));
  }
  char host[INET6_ADDRSTRLEN] = "";
  const void* addr = ss.ss_family == AF_INET6
                         ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr)
                         : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr);
  if (!inet_ntop(ss.ss_family, addr, host, sizeof host)) throw TransportError("not a socket address");
  return std::make_unique<TcpListener>(Endpoint{host, 0});
}

}  // namespace rgpu::transport
