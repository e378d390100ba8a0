// shm: connection setup over a Unix socket; frames travel through shared
// rings (shm_ring_connection.hpp), and page-locked memory the application
// allocates is shared with the worker (shared_memory.hpp).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/shm/shm_listener.hpp"
#include "transport/shm/unix_address.hpp"
#include "transport/shm/shm_ring_connection.hpp"

namespace rgpu::transport {
namespace {

// A Unix socket connected to `path`.
int connect_unix(const std::string& path) {
  sockaddr_un addr;
  socklen_t len = unix_address(path, &addr);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw TransportError(std::string("socket: ") + strerror(errno));
  // A local connect either succeeds or fails at once: no timeout needed.
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    std::string why = strerror(errno);
    ::close(fd);
    throw TransportError("cannot connect to " + path + ": " + why);
  }
  return fd;
}

class ShmTransport final : public Transport {
 public:
  std::string name() const override { return "shm"; }

  std::unique_ptr<Connection> connect(const Endpoint& where, int /*timeout_ms*/) override {
    return ShmRingConnection::offer(connect_unix(where.host));
  }

  std::unique_ptr<Listener> listen(const Endpoint& where) override {
    return std::make_unique<ShmListener>(where.host);
  }

  std::unique_ptr<Connection> adopt(int handle) override { return std::make_unique<ShmRingConnection>(handle); }
};

}  // namespace

std::unique_ptr<Transport> make_shm_transport() { return std::make_unique<ShmTransport>(); }

std::unique_ptr<Connection> connect_shm_join(const std::string& path, std::span<const uint8_t> join_secret) {
  return ShmRingConnection::offer(connect_unix(path), join_secret);
}

std::string default_shm_socket(uint16_t port) { return "/tmp/rgpu-" + std::to_string(port) + ".sock"; }

}  // namespace rgpu::transport
