// Choosing the transport by what kind of socket a connection is.
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/hex.hpp"
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
  if (is_unix_socket(native_handle()))
    throw TransportError("a session over a Unix socket is joined through listen_for_joins");
  return std::make_unique<TcpListener>(Endpoint{socket_local_ip(native_handle()), 0});
}

std::unique_ptr<Listener> Connection::listen_for_joins(std::span<const uint8_t> join_secret) const {
  if (!is_unix_socket(native_handle())) return listen_beside();
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    throw TransportError(std::string("SO_PEERCRED: ") + strerror(errno));
  // Anyone may list abstract names (/proc/net/unix): the name is no secret,
  // only unguessable, so that nobody can take it before the worker does.
  uint8_t random[8];
  if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random))
    throw TransportError(std::string("getrandom: ") + strerror(errno));
  const std::string name = "@rgpu-join-" + std::to_string(getpid()) + "-" + hex(random);
  return std::make_unique<ShmListener>(name, JoinGuard{cred.uid, {join_secret.begin(), join_secret.end()}});
}

}  // namespace rgpu::transport
