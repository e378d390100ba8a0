// Choosing the transport by what kind of socket a connection is.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "transport/shm/shm_listener.hpp"
#include "transport/socket/socket_address.hpp"
#include "transport/tcp/tcp_listener.hpp"
#include "transport/transport.hpp"

namespace rgpu::transport {
namespace {

bool is_unix_socket(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    throw TransportError(std::string("getsockname: ") + strerror(errno));
  return ss.ss_family == AF_UNIX;
}

}  // namespace

std::unique_ptr<Connection> adopt_socket(int fd, Transport& network) {
  return is_unix_socket(fd) ? make_shm_transport()->adopt(fd) : network.adopt(fd);
}

std::unique_ptr<Listener> Connection::listen_beside() const {
  if (is_unix_socket(native_handle())) {
    static std::atomic<int> counter{0};
    return std::make_unique<ShmListener>("@rgpu-join-" + std::to_string(getpid()) + "-" +
                                         std::to_string(counter++));
  }
  return std::make_unique<TcpListener>(Endpoint{socket_local_ip(native_handle()), 0});
}

}  // namespace rgpu::transport
