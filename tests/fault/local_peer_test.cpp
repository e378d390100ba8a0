// Trust-boundary tests (issue 22): what a peer on the server's host can do
// with shared memory, Unix sockets and CUDA IPC. Shared memory it shrinks
// under the server's mapping kills no worker and no daemon (D3, D4); it
// cannot join another user's session, nor map anything there without the
// session's join secret (D4); it cannot find, list or open another
// client's IPC handles, and a killed daemon's records are gone once the
// server restarts (D5). A second local user is `rgpu-tenant` where CI made
// it, else uid 65534.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <dirent.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "server/worker/ipc_records.hpp"
#include "test_server.hpp"
#include "transport/shm/byte_ring.hpp"
#include "transport/shm/shared_memory.hpp"
#include "transport/shm/unix_address.hpp"
#include "transport/socket/descriptor_passing.hpp"

using namespace rgpu;
using namespace rgpu::test;

namespace {

// The size of a client's ring file (shm_ring_connection.cpp: a control page
// and two 1 MiB rings).
constexpr size_t kRingFileBytes = 4096 + 2 * (size_t{1} << 20);

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// A server whose log the test reads: a worker or daemon killed by a signal
// shows there.
class LoggedServer {
 public:
  explicit LoggedServer(std::vector<std::string> extra = {})
      : port_(free_port()),
        log_(std::filesystem::temp_directory_path() / ("rgpu-local-peer-" + std::to_string(port_) + ".log")),
        pid_(start_server(port_, std::move(extra), log_)) {}
  ~LoggedServer() {
    if (pid_ > 0) stop_server(pid_);
    std::filesystem::remove(log_);
  }
  LoggedServer(const LoggedServer&) = delete;
  LoggedServer& operator=(const LoggedServer&) = delete;

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string socket_path() const { return transport::default_shm_socket(port_); }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Waits a little for the daemon to reap, then says whether any process
  // of the server died of a signal.
  bool something_killed() const {
    sleep_ms(1200);
    return log().find("killed by signal") != std::string::npos;
  }
  void kill_all(int signal) {
    stop_server(pid_, signal);
    pid_ = -1;
  }

 private:
  uint16_t port_;
  std::string log_;
  pid_t pid_;
};

int connect_unix(const std::string& path) {
  sockaddr_un addr;
  socklen_t len = transport::unix_address(path, &addr);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A file of the rings' size: sealed, as clients make them, or not, as a
// hostile one may.
int ring_file(const char* name, bool sealed) {
  if (sealed) return transport::create_sealed_memfd(name, kRingFileBytes);
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, kRingFileBytes) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Offers `file` as shm rings on `sock`: a first connection's offer (and the
// join of servers before issue 22), or a join's with its secret.
bool offer(int sock, int file, const std::vector<uint8_t>& join_secret = {}) {
  std::vector<char> message{join_secret.empty() ? 'R' : 'J'};
  message.insert(message.end(), join_secret.begin(), join_secret.end());
  return transport::send_with_descriptor(sock, message.data(), message.size(), file);
}

// Whether the server closed `sock` within `ms`, having sent nothing.
bool closed_by_server(int sock, int ms) {
  pollfd p{sock, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return false;
  char c;
  ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

// How many mappings of memfds named `name` process `pid` has.
int memfd_mappings(pid_t pid, const std::string& name) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) n += line.find("/memfd:" + name + " ") != std::string::npos;
  return n;
}

bool maps_memfd(pid_t pid, const std::string& name) { return memfd_mappings(pid, name) > 0; }

// Runs `attack` (its status) while watching whether `worker` maps a memfd
// named `marker` meanwhile (for two seconds at most).
template <typename Attack>
int attack_watching_maps(pid_t worker, const std::string& marker, bool* mapped, Attack attack) {
  std::atomic<bool> seen{false};
  std::thread watch([&] {
    for (int i = 0; i < 100; ++i, sleep_ms(20)) seen = seen || maps_memfd(worker, marker);
  });
  const int status = attack();
  watch.join();
  *mapped = seen;
  return status;
}

// The D4 attack on a session's join point, from whoever runs it: rings the
// attacker shrinks once the worker could have mapped them. Then, rings
// that cannot shrink, offered with `secret`: the worker must not map them
// (their memfd's name is `marker`). Returns 0 when the worker closed both
// connections, 1 if it kept one open.
int attack_join_point(const std::string& join_path, const std::vector<uint8_t>& secret, const std::string& marker) {
  int result = 0;
  int sock = connect_unix(join_path);
  int file = ring_file("rgpu-test-shrunk", false);
  if (sock >= 0 && file >= 0 && offer(sock, file)) {
    sleep_ms(300);
    if (ftruncate(file, 0) != 0) return 2;
    if (!closed_by_server(sock, 1000)) result = 1;
  }
  if (sock >= 0) close(sock);
  if (file >= 0) close(file);
  sock = connect_unix(join_path);
  file = ring_file(marker.c_str(), true);
  if (sock >= 0 && file >= 0 && offer(sock, file, secret) && !closed_by_server(sock, 1000)) result = 1;
  if (sock >= 0) close(sock);
  if (file >= 0) close(file);
  return result;
}

// The client's end of rings it made itself (sealed or not), through which
// it speaks frames as the client library does.
class RawRings final : public transport::Connection {
 public:
  explicit RawRings(int file)
      : base_(static_cast<char*>(mmap(nullptr, kRingFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0))),
        out_(control(0), base_ + 4096, kRingBytes, [] {}),
        in_(control(1), base_ + 4096 + kRingBytes, kRingBytes, [] {}) {}
  // Unmapped before the file shrinks under it.
  ~RawRings() override { munmap(base_, kRingFileBytes); }

  void send(std::span<const iovec> parts, bool) override {
    for (const iovec& v : parts) out_.write(v.iov_base, v.iov_len);
  }
  void recv(void* dst, size_t len) override {
    if (!in_.wait_readable(std::chrono::steady_clock::now() + std::chrono::seconds(2)))
      throw transport::TransportError("no answer");
    in_.read(dst, len);
  }
  bool wait_readable(int ms) override {
    return in_.wait_readable(std::chrono::steady_clock::now() + std::chrono::milliseconds(ms));
  }
  void shutdown() override {}
  int native_handle() const override { return -1; }
  std::string peer() const override { return "raw rings"; }
  void send_with_fd(std::span<const iovec> parts, int) override { send(parts, false); }
  int take_fd() override { return -1; }
  bool passes_descriptors() const override { return false; }

 private:
  static constexpr size_t kRingBytes = size_t{1} << 20;
  transport::RingControl* control(int ring) {
    return new (base_ + ring * sizeof(transport::RingControl)) transport::RingControl{};
  }
  char* base_;
  transport::ByteRing out_, in_;
};

struct IpcHandle {
  uint64_t server = 0;
  std::array<uint8_t, 16> token{};
};

// Exports 1 MiB of new device memory of session `s`.
cudaError_t export_memory(client::Session& s, IpcHandle* handle) {
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(1 << 20);
  if (cudaError_t e = s.call(proto::kOpMalloc, 0, m.bytes(), {}, reply)) return e;
  proto::Writer w;
  w.put<uint64_t>(proto::Reader(reply).get<uint64_t>()).put<uint64_t>(1 << 20);
  if (cudaError_t e = s.call(proto::kOpIpcGetMemHandle, 0, w.bytes(), {}, reply)) return e;
  proto::Reader r(reply);
  handle->server = r.get<uint64_t>();
  handle->token = r.get<std::array<uint8_t, 16>>();
  return cudaSuccess;
}

cudaError_t open_handle(client::Session& s, const IpcHandle& handle) {
  std::vector<uint8_t> reply;
  proto::Writer w;
  w.put<uint64_t>(handle.server).put(handle.token).put<uint32_t>(cudaIpcMemLazyEnablePeerAccess);
  return s.call(proto::kOpIpcOpenMemHandle, 0, w.bytes(), {}, reply);
}

std::string hex(const uint8_t* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// Names in `dir` (none if it cannot be read).
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    names.push_back(it->path().filename().string());
  return names;
}

}  // namespace

// D3, worker side: rings offered on the server's socket and shrunk once the
// worker could have mapped them (it touches them while it waits for the
// hello). The worker refuses rings that are not sealed; nothing dies.
TEST(LocalPeer, ShrinkingOfferedRingsKillsNoWorker) {
  LoggedServer server;
  int sock = connect_unix(server.socket_path());
  ASSERT_GE(sock, 0);
  int file = ring_file("rgpu-test-shrunk", false);
  ASSERT_TRUE(offer(sock, file));
  sleep_ms(300);
  ASSERT_EQ(ftruncate(file, 0), 0);
  EXPECT_TRUE(closed_by_server(sock, 2000)) << "the server kept a connection whose rings can shrink";
  close(sock);
  close(file);
  EXPECT_FALSE(server.something_killed()) << server.log();
  EXPECT_TRUE(running(server.pid()));
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// D3, daemon side: at max-sessions the daemon refuses a new client; rings
// offered then and shrunk once the refusal could have been written into
// them (and touched again when the client hangs up) kill nothing.
TEST(LocalPeer, ShrinkingRingsOfferedToARefusingDaemonKillsNothing) {
  LoggedServer server({"--max-sessions", "1"});
  {
    auto held = open_session(server.port(), "shm");
    ASSERT_TRUE(held);
    int sock = connect_unix(server.socket_path());
    ASSERT_GE(sock, 0);
    int file = ring_file("rgpu-test-shrunk", false);
    ASSERT_TRUE(offer(sock, file));
    sleep_ms(500);
    ASSERT_EQ(ftruncate(file, 0), 0);
    sleep_ms(300);
    close(sock);
    close(file);
    EXPECT_FALSE(server.something_killed()) << server.log();
    EXPECT_TRUE(running(server.pid()));
    EXPECT_EQ(synchronize(*held), cudaSuccess);
  }
  std::unique_ptr<client::Session> s;
  std::string why;
  for (int i = 0; i < 50 && !s; ++i, sleep_ms(100))
    s = client::Session::open({"127.0.0.1", server.port()}, "shm", {0}, &why);
  ASSERT_TRUE(s) << "no session after the held one ended";
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// Page-locked and managed memory a client shares must be sealed too: an
// unsealed memfd is refused, and shrinking it then kills nothing.
TEST(LocalPeer, UnsealedPageLockedOrManagedMemoryIsRefused) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  constexpr size_t kBytes = 1 << 20;
  int file = memfd_create("rgpu-test-pinned", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(file, kBytes), 0);
  std::vector<uint8_t> reply;
  const uint64_t pinned = 0x6d0000000000ull, managed = 0x6d8000000000ull;
  proto::Writer reg;
  reg.put<uint64_t>(pinned).put<uint64_t>(kBytes);
  EXPECT_EQ(s->call_with_fd(proto::kOpHostRegisterShared, 0, reg.bytes(), file, reply), cudaErrorInvalidValue);
  proto::Writer map;
  map.put<uint64_t>(managed).put<uint64_t>(kBytes);
  EXPECT_NE(s->call_with_fd(proto::kOpManagedMap, 0, map.bytes(), file, reply), cudaSuccess);
  ASSERT_EQ(ftruncate(file, 0), 0);
  // Were the memory mapped, these copies would touch it.
  std::vector<uint8_t> d;
  proto::Writer m;
  m.put<uint64_t>(kBytes);
  ASSERT_EQ(s->call(proto::kOpMalloc, 0, m.bytes(), {}, d), cudaSuccess);
  const uint64_t dev = proto::Reader(d).get<uint64_t>();
  proto::Writer copy;
  copy.put<uint64_t>(dev).put<uint64_t>(pinned).put<uint64_t>(kBytes).put<uint8_t>(1).put<uint64_t>(0).put<uint8_t>(1)
      .put<uint8_t>(1);
  s->call(proto::kOpMemcpyShared, 0, copy.bytes(), {}, reply);
  proto::Writer memset;
  memset.put<uint64_t>(managed).put<int32_t>(1).put<uint64_t>(kBytes).put<uint64_t>(0);
  s->call(proto::kOpMemset, 0, memset.bytes(), {}, reply);
  close(file);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  EXPECT_FALSE(server.something_killed()) << server.log();
}

// What the client library shares is sealed: it cannot shrink (or grow).
TEST(LocalPeer, SharedMemoryIsSealedAtItsSize) {
  auto m = transport::create_shared_memory(1 << 16);
  EXPECT_EQ(transport::unsafe_to_map(m.fd, 1 << 16), "");
  EXPECT_NE(ftruncate(m.fd, 0), 0);
  EXPECT_NE(ftruncate(m.fd, 1 << 20), 0);
  EXPECT_NE(transport::unsafe_to_map(m.fd, 1 << 17), "");  // shorter than asked for
  transport::release_shared_memory(m);
  int plain = memfd_create("rgpu-test-plain", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(plain, 1 << 16), 0);
  EXPECT_NE(transport::unsafe_to_map(plain, 1 << 16), "");
  close(plain);
}

// D4, another user: a session's join point is an abstract socket anyone may
// connect to. The worker admits only its session's user: the attacker's
// rings are never mapped (shrinking them kills nothing), even offered with
// the right secret.
TEST(LocalPeer, AnotherUserCannotJoinOrCrashASession) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  ASSERT_FALSE(s->hello().join_path.empty());
  const std::string join = s->hello().join_path;
  const std::vector<uint8_t> secret = s->hello().join_secret;
  const pid_t worker = static_cast<pid_t>(s->hello().worker_pid);
  bool mapped = false;
  EXPECT_EQ(attack_watching_maps(worker, "rgpu-test-other-user", &mapped,
                                 [&] {
                                   return as_second_user(
                                       [&] { return attack_join_point(join, secret, "rgpu-test-other-user"); });
                                 }),
            0)
      << "the worker kept another user's connection open";
  EXPECT_FALSE(mapped) << "the worker mapped another user's rings";
  EXPECT_TRUE(running(worker));
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  EXPECT_FALSE(server.something_killed()) << server.log();
}

// D4, after joining: the session's own user (a hostile client) joins with
// the secret and rings it did not seal, then shrinks them. Sealing is asked
// of joins too: the worker never maps them, nothing dies.
TEST(LocalPeer, ShrinkingRingsAfterJoiningKillsNothing) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  const pid_t worker = static_cast<pid_t>(s->hello().worker_pid);
  const std::vector<uint8_t> secret = s->hello().join_secret;
  // With the secret in the offer, and (as before issue 22) only in the join frame.
  for (const auto& offered : {secret, std::vector<uint8_t>{}}) {
    int sock = connect_unix(s->hello().join_path);
    ASSERT_GE(sock, 0);
    int file = ring_file("rgpu-test-shrunk", false);
    ASSERT_TRUE(offer(sock, file, offered));
    {
      RawRings rings(file);
      try {
        proto::Writer w;
        proto::Join{secret, proto::kJoinCalls}.encode(w);
        proto::send_frame(rings, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
        auto h = proto::recv_header(rings);
        std::vector<uint8_t> args;
        proto::recv_args(rings, h, args);
      } catch (const std::exception&) {
        // refused: no answer comes
      }
    }
    ASSERT_EQ(ftruncate(file, 0), 0);
    sleep_ms(300);
    close(sock);
    close(file);
  }
  EXPECT_TRUE(running(worker));
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  EXPECT_FALSE(server.something_killed()) << server.log();
}

// D4, the same user without the secret: rings offered with no secret (the
// join before issue 22) or a wrong one are not mapped, and shrinking them
// kills nothing.
TEST(LocalPeer, WrongJoinSecretMapsNothing) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  const pid_t worker = static_cast<pid_t>(s->hello().worker_pid);
  std::vector<uint8_t> wrong = s->hello().join_secret;
  ASSERT_FALSE(wrong.empty());
  wrong[0] ^= 1;
  bool mapped = false;
  EXPECT_EQ(attack_watching_maps(worker, "rgpu-test-wrong-secret", &mapped,
                                 [&] { return attack_join_point(s->hello().join_path, wrong, "rgpu-test-wrong-secret"); }),
            0)
      << "the worker kept a connection without the join secret open";
  EXPECT_FALSE(mapped) << "the worker mapped rings offered with a wrong secret";
  EXPECT_TRUE(running(worker));
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  EXPECT_FALSE(server.something_killed()) << server.log();
}

// The session's own threads still join over shm (with the secret): each
// has rings of its own that the worker mapped (the client names every ring
// file rgpu-pinned).
TEST(LocalPeer, TheSessionsOwnThreadsStillJoin) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  const pid_t worker = static_cast<pid_t>(s->hello().worker_pid);
  const int before = memfd_mappings(worker, "rgpu-pinned");
  std::vector<std::thread> threads;
  std::atomic<int> served{0};
  // Each keeps its connection until all have one (a thread's connection
  // goes to the next thread once it ends).
  std::atomic<int> waiting{4};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      served += synchronize(*s) == cudaSuccess;
      --waiting;
      while (waiting > 0) sleep_ms(5);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(served, 4);
  // One of them may take the connection the session opened with.
  EXPECT_GE(memfd_mappings(worker, "rgpu-pinned"), before + 3);
  EXPECT_EQ(server.log().find("join"), std::string::npos) << server.log();
}

// D5: the token of an exported handle appears in no name anyone may list;
// the records' directory is the server user's alone.
TEST(LocalPeer, IpcTokensAreInNoListableName) {
  LoggedServer server;
  auto s = open_session(server.port(), "shm");
  ASSERT_TRUE(s);
  IpcHandle h;
  ASSERT_EQ(export_memory(*s, &h), cudaSuccess);
  const std::string token = hex(h.token.data() + 4, h.token.size() - 4);  // past the worker's pid
  for (const auto& name : names_in("/dev/shm")) EXPECT_EQ(name.find(token), std::string::npos) << name;
  const std::string dir = server::default_ipc_directory(server.port());
  for (const auto& name : names_in(dir)) EXPECT_EQ(name.find(token), std::string::npos) << name;
  struct stat st;
  ASSERT_EQ(lstat(dir.c_str(), &st), 0) << dir;
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(as_second_user([&] {
              DIR* d = opendir(dir.c_str());
              if (d) closedir(d);
              return d ? 1 : 0;
            }),
            0)
      << "another user can list " << dir;
}

// D5: a handle opens only for the client that exported it (same user over
// the Unix socket, same host over tcp, same job): not for another user on
// the host, nor another client identity, unless --ipc-sharing says so.
TEST(LocalPeer, OnlyTheExportingClientOpensAnIpcHandle) {
  LoggedServer server({"--unix-socket-mode", "666"});
  auto owner = open_session(server.port(), "shm");
  ASSERT_TRUE(owner);
  IpcHandle h;
  ASSERT_EQ(export_memory(*owner, &h), cudaSuccess);
  auto same_user = open_session(server.port(), "shm");
  ASSERT_TRUE(same_user);
  EXPECT_EQ(open_handle(*same_user, h), cudaSuccess);
  auto over_tcp = open_session(server.port(), "tcp");  // "host 127.0.0.1", not "user 0"
  ASSERT_TRUE(over_tcp);
  EXPECT_EQ(open_handle(*over_tcp, h), cudaErrorInvalidResourceHandle);
  const uint16_t port = server.port();
  EXPECT_EQ(as_second_user([&] {
              std::string why;
              auto other = client::Session::open({"127.0.0.1", port}, "shm", {0}, &why);
              if (!other) return 2;
              return open_handle(*other, h) == cudaErrorInvalidResourceHandle ? 0 : 1;
            }),
            0)
      << "another user opened the handle (2: no session for that user)";
}

TEST(LocalPeer, IpcSharingServerLetsAnyClientOpen) {
  LoggedServer server({"--ipc-sharing", "server"});
  auto owner = open_session(server.port(), "shm");
  ASSERT_TRUE(owner);
  IpcHandle h;
  ASSERT_EQ(export_memory(*owner, &h), cudaSuccess);
  auto over_tcp = open_session(server.port(), "tcp");
  ASSERT_TRUE(over_tcp);
  EXPECT_EQ(open_handle(*over_tcp, h), cudaSuccess);
}

// D5: a killed daemon's workers leave their records (and the test backend's
// exported memory); the server restarted on the same port removes them.
TEST(LocalPeer, AKilledDaemonsIpcRecordsAreGoneAfterRestart) {
  auto server = std::make_unique<LoggedServer>();
  const uint16_t port = server->port();
  pid_t worker;
  {
    auto s = open_session(port, "shm");
    ASSERT_TRUE(s);
    worker = static_cast<pid_t>(s->hello().worker_pid);
    IpcHandle h;
    ASSERT_EQ(export_memory(*s, &h), cudaSuccess);
    server->kill_all(SIGKILL);
  }
  // Every name the worker made: in the records' directory, or (before
  // issue 22) in /dev/shm.
  auto left = [&] {
    std::vector<std::string> names;
    for (const auto& n : names_in(server::default_ipc_directory(port)))
      if (n.rfind(server::ipc_name_prefix(worker), 0) == 0) names.push_back(n);
    for (const auto& n : names_in("/dev/shm"))
      if (n.rfind("rgpu-ipc-" + std::to_string(worker) + "-", 0) == 0) names.push_back(n);
    return names;
  };
  for (int i = 0; i < 50 && running(worker); ++i) sleep_ms(20);
  EXPECT_FALSE(left().empty()) << "the killed worker left nothing to clean up: the test proves nothing";
  pid_t restarted = start_server(port, {});
  EXPECT_EQ(left(), std::vector<std::string>{});
  stop_server(restarted);
}

// The records' directory is never taken over from someone else: a name
// there that is a symbolic link (emptying it would delete what it points
// to) or a directory others may enter stops the server at start.
TEST(LocalPeer, AnIpcDirectoryOfSomeoneElseStopsTheServer) {
  const auto base = std::filesystem::temp_directory_path() / ("rgpu-ipc-squat-" + std::to_string(getpid()));
  std::filesystem::create_directories(base / "victim");
  std::ofstream(base / "victim" / "precious") << "kept";
  std::filesystem::create_directory_symlink(base / "victim", base / "link");
  std::filesystem::create_directory(base / "open");
  std::filesystem::permissions(base / "open", std::filesystem::perms::all);
  for (const char* name : {"link", "open"}) {
    const std::string dir = (base / name).string();
    const std::string port = std::to_string(free_port());
    pid_t pid = fork();
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stderr)) _exit(126);
      execl(RGPU_SERVER_BIN, RGPU_SERVER_BIN, "--backend", "host-test", "--port", port.c_str(), "--module-cache", "",
            "--unix-socket", "none", "--ipc-dir", dir.c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) sleep_ms(50);
    if (waitpid(pid, &status, WNOHANG) == 0) {
      ADD_FAILURE() << "the server started on " << name;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << name;
    }
  }
  EXPECT_TRUE(std::filesystem::exists(base / "victim" / "precious"));
  std::filesystem::remove_all(base);
}
