#include "transport/shm/shm_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/socket/socket_connection.hpp"

namespace rgpu::transport {

ShmListener::ShmListener(const std::string& path) : path_(path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw TransportError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw TransportError(std::string("socket: ") + strerror(errno));
  ::unlink(path.c_str());  // a stale socket of an earlier server
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 128) != 0) {
    std::string why = strerror(errno);
    ::close(fd_);
    throw TransportError("cannot listen on " + path + ": " + why);
  }
  // Any local user may connect; the token (if set) still decides.
  ::chmod(path.c_str(), 0666);
}

ShmListener::~ShmListener() {
  ::close(fd_);
  ::unlink(path_.c_str());
}

std::unique_ptr<Connection> ShmListener::accept() {
  for (;;) {
    int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return std::make_unique<SocketConnection>(fd);
    if (errno == EINTR || errno == ECONNABORTED) continue;
    throw TransportError(std::string("accept failed: ") + strerror(errno));
  }
}

}  // namespace rgpu::transport
