#include "transport/shm/shm_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/shm/unix_address.hpp"
#include "transport/shm/shm_ring_connection.hpp"

namespace rgpu::transport {

namespace {

bool peer_is(int fd, uid_t user) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == user;
}

}  // namespace

ShmListener::ShmListener(const std::string& path, std::optional<JoinGuard> guard)
    : path_(path), guard_(std::move(guard)) {
  sockaddr_un addr;
  socklen_t len = unix_address(path, &addr);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw TransportError(std::string("socket: ") + strerror(errno));
  if (!is_abstract(path)) ::unlink(path.c_str());  // a stale socket of an earlier server
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, SOMAXCONN) != 0) {
    std::string why = strerror(errno);
    ::close(fd_);
    throw TransportError("cannot listen on " + path + ": " + why);
  }
}

ShmListener::~ShmListener() {
  ::close(fd_);
  if (!is_abstract(path_)) ::unlink(path_.c_str());
}

void ShmListener::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::unique_ptr<Connection> ShmListener::accept() {
  for (;;) {
    int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0 && guard_ && !peer_is(fd, guard_->owner)) {
      ::close(fd);
      continue;
    }
    if (fd >= 0) return std::make_unique<ShmRingConnection>(fd, guard_ ? guard_->secret : std::vector<uint8_t>{});
    if (errno == EINTR || errno == ECONNABORTED) continue;
    throw TransportError(std::string("accept failed: ") + strerror(errno));
  }
}

}  // namespace rgpu::transport
