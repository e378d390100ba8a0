#include "transport/shm/shm_ring_connection.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "transport/socket/descriptor_passing.hpp"

namespace rgpu::transport {
namespace {

// Room for a few frames with small payloads in each direction; bigger
// payloads stream through in pieces.
constexpr size_t kRingBytes = 1u << 20;
constexpr size_t kControlBytes = 4096;
constexpr size_t kSharedBytes = kControlBytes + 2 * kRingBytes;
// A server-side connection whose client never offers its rings is dropped.
constexpr int kOfferTimeoutMs = 10000;
// The offer's first byte: rings for a first connection, or rings and the
// session's join secret for a connection joining a session.
constexpr char kOfferRings = 'R';
constexpr char kOfferJoin = 'J';

static_assert(2 * sizeof(RingControl) <= kControlBytes);

RingControl* control(void* base, int ring) { return static_cast<RingControl*>(base) + ring; }
char* ring_data(void* base, int ring) { return static_cast<char*>(base) + kControlBytes + ring * kRingBytes; }

// Waits until fd is readable or the deadline passes; false on timeout.
bool readable_by(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

std::unique_ptr<Connection> ShmRingConnection::offer(int fd, std::span<const uint8_t> join_secret) {
  auto conn = std::make_unique<ShmRingConnection>(fd);
  SharedMemory mem = create_shared_memory(kSharedBytes);
  for (int ring = 0; ring < 2; ++ring) new (control(mem.base, ring)) RingControl{};
  std::vector<char> message{join_secret.empty() ? kOfferRings : kOfferJoin};
  message.insert(message.end(), join_secret.begin(), join_secret.end());
  bool sent = send_with_descriptor(fd, message.data(), message.size(), mem.fd);
  int err = errno;
  conn->attach(mem, true);
  if (!sent) throw TransportError(std::string("cannot offer shared rings: ") + strerror(err));
  return conn;
}

ShmRingConnection::~ShmRingConnection() {
  // A peer waiting on the rings learns at once that nothing more comes.
  if (attached_) {
    in_->close();
    out_->close();
  }
  in_.reset();
  out_.reset();
  release_shared_memory(mem_);
  ::close(fd_);
  for (int fd : fds_) ::close(fd);
}

void ShmRingConnection::attach(SharedMemory mem, bool client) {
  mem_ = mem;
  auto alive = [this] { check_peer_alive(); };
  // Ring 0 carries client to server, ring 1 server to client.
  int out = client ? 0 : 1, in = 1 - out;
  out_ = std::make_unique<ByteRing>(control(mem.base, out), ring_data(mem.base, out), kRingBytes, alive);
  in_ = std::make_unique<ByteRing>(control(mem.base, in), ring_data(mem.base, in), kRingBytes, alive);
  attached_ = true;
}

void ShmRingConnection::accept_offer(int timeout_ms) {
  if (attached_) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!readable_by(fd_, deadline)) throw TransportError("the client offered no shared rings");
  char tag = 0;
  ssize_t n = receive_with_descriptors(fd_, {&tag, 1}, fds_);
  const char expected = join_secret_.empty() ? kOfferRings : kOfferJoin;
  if (n != 1 || tag != expected || fds_.empty()) throw TransportError("the client offered no shared rings");
  int mem_fd = fds_.back();
  fds_.pop_back();
  if (!join_secret_.empty()) {
    try {
      check_join_secret(deadline);
    } catch (const TransportError&) {
      ::close(mem_fd);
      throw;
    }
  }
  struct stat st;
  // The size must be ours exactly: the rings' layout depends on it.
  if (fstat(mem_fd, &st) != 0 || static_cast<size_t>(st.st_size) != kSharedBytes) {
    ::close(mem_fd);
    throw TransportError("the client's shared rings have the wrong size");
  }
  std::string why;
  void* base = map_shared_memory(mem_fd, kSharedBytes, nullptr, false, &why);
  if (!base) throw TransportError("the client's shared rings refused: " + why);
  attach(SharedMemory{base, kSharedBytes, -1}, false);
}

void ShmRingConnection::check_join_secret(std::chrono::steady_clock::time_point deadline) {
  std::vector<uint8_t> offered(join_secret_.size());
  for (size_t got = 0; got < offered.size();) {
    if (!readable_by(fd_, deadline)) throw TransportError("the join secret did not come in time");
    ssize_t n = ::recv(fd_, offered.data() + got, offered.size() - got, MSG_DONTWAIT);
    if (n == 0) throw TransportError("connection closed during the join");
    if (n < 0 && errno != EAGAIN && errno != EINTR) throw TransportError(std::string("recv: ") + strerror(errno));
    if (n > 0) got += static_cast<size_t>(n);
  }
  // Constant time, as proto::same_secret compares: how much of the secret
  // matched must not show in how long the answer took.
  if (offered.size() != join_secret_.size() ||
      CRYPTO_memcmp(offered.data(), join_secret_.data(), offered.size()) != 0)
    throw TransportError("wrong join secret: not a connection of this session");
}

void ShmRingConnection::check_peer_alive() {
  if (shut_) throw TransportError("connection shut down");
  pollfd pfd{fd_, POLLRDHUP, 0};
  if (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
    throw TransportError("connection closed by peer");
}

void ShmRingConnection::send(std::span<const iovec> parts, bool) {
  accept_offer(kOfferTimeoutMs);
  for (const iovec& v : parts) out_->write(v.iov_base, v.iov_len);
}

void ShmRingConnection::recv(void* dst, size_t len) {
  accept_offer(kOfferTimeoutMs);
  in_->read(dst, len);
}

bool ShmRingConnection::wait_readable(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  accept_offer(timeout_ms);
  return in_->wait_readable(deadline);
}

void ShmRingConnection::shutdown() {
  shut_ = true;
  if (attached_) {
    in_->close();
    out_->close();
  }
  ::shutdown(fd_, SHUT_RDWR);
}

void ShmRingConnection::send_with_fd(std::span<const iovec> parts, int fd) {
  accept_offer(kOfferTimeoutMs);
  // The descriptor goes ahead on the socket: by the time the peer reads the
  // frame from the ring, take_fd() finds it there.
  char tag = 'F';
  if (!send_byte_with_descriptor(fd_, &tag, fd))
    throw TransportError(std::string("cannot pass a descriptor: ") + strerror(errno));
  send(parts);
}

int ShmRingConnection::take_fd() {
  char tag;
  while (receive_with_descriptors(fd_, {&tag, 1}, fds_, MSG_DONTWAIT) > 0) {
  }
  if (fds_.empty()) return -1;
  int fd = fds_.front();
  fds_.pop_front();
  return fd;
}

}  // namespace rgpu::transport
