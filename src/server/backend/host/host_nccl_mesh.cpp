#include "server/backend/host/host_nccl_mesh.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "common/log.hpp"

namespace rgpu::server {
namespace {

constexpr char kMagic[8] = {'R', 'G', 'P', 'U', 'H', 'N', 'C', '1'};
// How long a bootstrap waits for all ranks, and set-up reads for a peer.
constexpr int kSetupSeconds = 60;
constexpr int kMaxRanks = 1024;

// The id's bytes: magic, the listener's port (IPv4 loopback), a nonce every
// connection of the communicator repeats.
struct IdLayout {
  char magic[8];
  uint16_t port;
  uint64_t nonce;
};

struct Hello {
  uint64_t nonce;
  int32_t nranks;
  int32_t rank;
  uint16_t data_port;
};

struct PeerHello {
  uint64_t nonce;
  int32_t rank;
};

bool write_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return false;
    }
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return false;
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void set_timeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A listener on 127.0.0.1 at an ephemeral port; -1 on failure.
int listen_loopback(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, kMaxRanks) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Accepts within the set-up time; -1 when none came.
int accept_within(int listener, int seconds) {
  pollfd p{listener, POLLIN, 0};
  if (poll(&p, 1, seconds * 1000) != 1) return -1;
  int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// The bootstrap: collects every rank's hello, then sends each the ranks'
// data ports in rank order. Hellos of another communicator or a repeated
// rank are dropped.
void serve_bootstrap(int listener, uint64_t nonce) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  int nranks = -1, joined = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSetupSeconds);
  while (joined != nranks && std::chrono::steady_clock::now() < deadline) {
    int fd = accept_within(listener, kSetupSeconds);
    if (fd < 0) break;
    set_timeout(fd, kSetupSeconds);
    Hello h{};
    bool fits = read_all(fd, &h, sizeof h) && h.nonce == nonce && h.nranks > 0 && h.nranks <= kMaxRanks &&
                (nranks < 0 || h.nranks == nranks) && h.rank >= 0 && h.rank < h.nranks;
    if (fits && nranks < 0) {
      nranks = h.nranks;
      fds.assign(nranks, -1);
      ports.assign(nranks, 0);
    }
    if (!fits || fds[h.rank] >= 0) {
      RGPU_LOG(warn, "host-test NCCL bootstrap: a hello that does not fit its communicator, dropped");
      close(fd);
      continue;
    }
    fds[h.rank] = fd;
    ports[h.rank] = h.data_port;
    ++joined;
  }
  if (joined == nranks)
    for (int fd : fds) write_all(fd, ports.data(), ports.size() * sizeof(uint16_t));
  else
    RGPU_LOG(warn, "host-test NCCL bootstrap: %d of %d ranks joined in %d s", joined, nranks, kSetupSeconds);
  for (int fd : fds)
    if (fd >= 0) close(fd);
  close(listener);
}

}  // namespace

bool host_nccl_make_id(proto::NcclUniqueIdWire* id, std::string* why) {
  IdLayout l{};
  std::memcpy(l.magic, kMagic, sizeof kMagic);
  int listener = listen_loopback(&l.port);
  if (listener < 0) {
    *why = std::string("cannot listen for the bootstrap: ") + std::strerror(errno);
    return false;
  }
  l.nonce = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  std::memset(id->bytes, 0, sizeof id->bytes);
  std::memcpy(id->bytes, &l, sizeof l);
  std::thread(serve_bootstrap, listener, l.nonce).detach();
  return true;
}

bool HostNcclMesh::join(const proto::NcclUniqueIdWire& id, int nranks, int rank, HostNcclMesh* mesh,
                        std::string* why) {
  IdLayout l;
  std::memcpy(&l, id.bytes, sizeof l);
  if (std::memcmp(l.magic, kMagic, sizeof kMagic) != 0) {
    *why = "not a unique id of the host-test backend";
    return false;
  }
  if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) {
    *why = "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " is out of range";
    return false;
  }
  mesh->rank_ = rank;
  mesh->fds_.assign(nranks, -1);
  if (nranks == 1) return true;
  Hello h{l.nonce, nranks, rank, 0};
  int listener = listen_loopback(&h.data_port);
  int boot = listener < 0 ? -1 : connect_loopback(l.port);
  std::vector<uint16_t> ports(nranks);
  bool ok = boot >= 0;
  if (ok) {
    set_timeout(boot, kSetupSeconds);
    ok = write_all(boot, &h, sizeof h) && read_all(boot, ports.data(), ports.size() * sizeof(uint16_t));
    close(boot);
  }
  if (!ok) {
    if (listener >= 0) close(listener);
    *why = "the bootstrap of the unique id did not bring every rank together";
    return false;
  }
  // Lower ranks listen, higher ranks connect to them.
  for (int peer = 0; peer < rank && ok; ++peer) {
    int fd = connect_loopback(ports[peer]);
    PeerHello ph{l.nonce, rank};
    ok = fd >= 0 && write_all(fd, &ph, sizeof ph);
    if (fd >= 0) mesh->fds_[peer] = fd;
  }
  for (int accepted = rank + 1; accepted < nranks && ok; ++accepted) {
    int fd = accept_within(listener, kSetupSeconds);
    PeerHello ph{};
    if (fd >= 0) set_timeout(fd, kSetupSeconds);
    ok = fd >= 0 && read_all(fd, &ph, sizeof ph) && ph.nonce == l.nonce && ph.rank > rank && ph.rank < nranks &&
         mesh->fds_[ph.rank] < 0;
    if (ok) {
      mesh->fds_[ph.rank] = fd;
    } else if (fd >= 0) {
      close(fd);
    }
  }
  close(listener);
  if (!ok) {
    *why = "a rank did not connect to its peers";
    return false;
  }
  // Collectives may wait for a slow peer as long as it takes; abort ends them.
  for (int fd : mesh->fds_)
    if (fd >= 0) set_timeout(fd, 0);
  return true;
}

HostNcclMesh::~HostNcclMesh() {
  for (int fd : fds_)
    if (fd >= 0) close(fd);
}

bool HostNcclMesh::exchange(int peer, const void* send, size_t send_n, void* recv, size_t recv_n, std::string* why) {
  if (shut_.load()) {
    *why = "the communicator was aborted";
    return false;
  }
  int fd = fds_[peer];
  bool ok = rank_ < peer ? write_all(fd, send, send_n) && read_all(fd, recv, recv_n)
                         : read_all(fd, recv, recv_n) && write_all(fd, send, send_n);
  if (!ok)
    *why = shut_.load() ? "the communicator was aborted"
                        : "rank " + std::to_string(peer) + " is gone (its connection closed mid-collective)";
  return ok;
}

void HostNcclMesh::shut() {
  shut_.store(true);
  for (int fd : fds_)
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
}

}  // namespace rgpu::server
