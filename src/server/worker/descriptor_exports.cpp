#include "server/worker/descriptor_exports.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "protocol/codec.hpp"
#include "transport/socket/descriptor_passing.hpp"

namespace rgpu::server {
namespace {

// Workers answer each other at once; a peer slower than this is dropped.
constexpr int kPeerDeadlineSeconds = 2;
constexpr uint32_t kMaxRequestBytes = 4096;

enum class Answer : int32_t { descriptor = 0, no_such_export = 1, not_shared = 2 };

std::string socket_path(uint32_t worker) {
  return ipc_directory() + "/" + ipc_name_prefix(static_cast<pid_t>(worker)) + "descriptors";
}

bool fill_address(const std::string& path, sockaddr_un* a) {
  *a = sockaddr_un{};
  a->sun_family = AF_UNIX;
  if (path.size() >= sizeof a->sun_path) return false;
  std::memcpy(a->sun_path, path.c_str(), path.size() + 1);
  return true;
}

void set_deadline(int fd) {
  timeval t{kPeerDeadlineSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
}

// The peer process's credentials; false if they cannot be had.
bool peer_credentials(int fd, ucred* cred) {
  socklen_t len = sizeof *cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0;
}

bool read_exactly(int fd, void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n) {
    ssize_t got = recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const uint8_t*>(data);
  while (n) {
    ssize_t sent = send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    p += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

DescriptorExports::~DescriptorExports() {
  if (server_.joinable()) {
    char stop = 0;
    (void)!write(stop_[1], &stop, 1);
    server_.join();
  }
  if (listener_ >= 0) {
    close(listener_);
    unlink(path_.c_str());
  }
  for (int fd : stop_)
    if (fd >= 0) close(fd);
  for (const auto& e : exports_) close(e.fd);
}

bool DescriptorExports::find(proto::DescriptorKind kind, uint64_t source, proto::DescriptorToken* token) {
  std::lock_guard lock(mutex_);
  for (const auto& e : exports_) {
    if (e.kind != kind || e.source != source) continue;
    token->export_id = e.id;
    token->kind = kind;
    std::memcpy(token->secret, e.secret, sizeof e.secret);
    return true;
  }
  return false;
}

std::string DescriptorExports::add(proto::DescriptorKind kind, uint64_t source, int fd, const IpcOwner& owner,
                                   IpcSharing sharing, proto::DescriptorToken* token) {
  std::lock_guard lock(mutex_);
  Export e{kind, source, next_id_++, {}, fd, owner, sharing};
  std::string why = listen();
  if (why.empty() && RAND_bytes(e.secret, sizeof e.secret) != 1) why = "no randomness for a secret";
  if (!why.empty()) {
    close(fd);
    return why;
  }
  token->kind = kind;
  token->export_id = e.id;
  std::memcpy(token->secret, e.secret, sizeof e.secret);
  exports_.push_back(std::move(e));
  return "";
}

void DescriptorExports::drop(proto::DescriptorKind kind, uint64_t source) {
  std::lock_guard lock(mutex_);
  std::erase_if(exports_, [&](const Export& e) {
    if (e.kind != kind || e.source != source) return false;
    close(e.fd);
    return true;
  });
}

// Called with mutex_ held: the first export starts the socket and its thread.
std::string DescriptorExports::listen() {
  if (listener_ >= 0) return "";
  if (ipc_directory().empty()) return "the server has no IPC directory";
  sockaddr_un a;
  std::string path = socket_path(static_cast<uint32_t>(getpid()));
  if (!fill_address(path, &a)) return "the IPC directory's path is too long for a Unix socket (--ipc-dir)";
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + strerror(errno);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0 ||
      pipe2(stop_, O_CLOEXEC) != 0) {
    std::string why = "cannot listen on " + path + ": " + strerror(errno);
    close(fd);
    return why;
  }
  listener_ = fd;
  path_ = path;
  server_ = std::thread([this] { serve(); });
  return "";
}

void DescriptorExports::serve() {
  for (;;) {
    pollfd p[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    if (!(p[0].revents & POLLIN)) continue;
    int peer = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0) continue;
    ucred cred{};
    // Only workers of this server (its user) may ask: the directory's mode
    // already keeps others out.
    if (peer_credentials(peer, &cred) && cred.uid == geteuid()) {
      set_deadline(peer);
      answer(peer);
    }
    close(peer);
  }
}

void DescriptorExports::answer(int peer) {
  uint32_t n = 0;
  if (!read_exactly(peer, &n, sizeof n) || n > kMaxRequestBytes) return;
  std::vector<uint8_t> body(n);
  if (!read_exactly(peer, body.data(), n)) return;
  proto::DescriptorToken token;
  IpcOwner importer;
  try {
    proto::Reader r(body);
    token = r.get<proto::DescriptorToken>();
    importer.client = r.get_string();
    importer.job = r.get_string();
    r.expect_end();
  } catch (const proto::DecodeError&) {
    return;
  }
  Answer answer = Answer::no_such_export;
  int fd = -1;
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : exports_) {
      if (e.id != token.export_id || e.kind != token.kind ||
          CRYPTO_memcmp(e.secret, token.secret, sizeof e.secret) != 0)
        continue;
      if (may_import(e.sharing, e.owner, importer)) {
        answer = Answer::descriptor;
        fd = e.fd;
      } else {
        answer = Answer::not_shared;
      }
      break;
    }
  }
  if (answer == Answer::descriptor)
    transport::send_with_descriptor(peer, &answer, sizeof answer, fd);
  else
    write_all(peer, &answer, sizeof answer);
}

int fetch_exported_descriptor(const proto::DescriptorToken& token, const IpcOwner& importer, std::string* why) {
  sockaddr_un a;
  if (ipc_directory().empty() || !fill_address(socket_path(token.worker), &a)) {
    *why = "the server has no IPC directory";
    return -1;
  }
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    *why = std::string("socket: ") + strerror(errno);
    return -1;
  }
  set_deadline(s);
  ucred cred{};
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || !peer_credentials(s, &cred) ||
      cred.uid != geteuid() || cred.pid != static_cast<pid_t>(token.worker)) {
    *why = "its exporting session has ended (or it is no handle of this server)";
    close(s);
    return -1;
  }
  proto::Writer w;
  w.put(token).put_string(importer.client).put_string(importer.job);
  uint32_t n = static_cast<uint32_t>(w.size());
  Answer answer{};
  std::deque<int> fds;
  bool asked = write_all(s, &n, sizeof n) && write_all(s, w.bytes().data(), w.size());
  ssize_t got = asked ? transport::receive_with_descriptors(s, {&answer, sizeof answer}, fds, MSG_WAITALL) : -1;
  close(s);
  int fd = got == static_cast<ssize_t>(sizeof answer) && answer == Answer::descriptor && !fds.empty() ? fds.front() : -1;
  for (int other : fds)
    if (other != fd) close(other);
  if (fd < 0)
    *why = answer == Answer::not_shared ? "exported by another client or job (--ipc-sharing)"
                                        : "no such export: a wrong secret, or a handle no longer exported";
  return fd;
}

}  // namespace rgpu::server
