// Trust-boundary tests (issue 22), before authentication: a peer that has
// proved nothing costs the server no more than a few bytes and a deadline.
// D1 (partial hellos pin workers), D2 (a full shm ring blocks the daemon),
// silent-connection and join-port floods, and what peers make the server log.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include <cuda_runtime_api.h>

#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/message_io.hpp"
#include "protocol/ops.hpp"
#include "test_server.hpp"
#include "transport/shm/byte_ring.hpp"
#include "transport/socket/descriptor_passing.hpp"
#include "transport/transport.hpp"

namespace rgpu::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The server's default --hello-timeout; the tests give no flag, so that they
// run against servers that do not know it (RGPU_TEST_SERVER_BIN).
constexpr auto kHelloTimeout = 5s;
// What a loaded CI machine may add to it before a connection is seen closed.
constexpr auto kSlack = 2500ms;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A tcp socket to 127.0.0.1:port, bound to `from` first; -1 on failure.
int tcp_socket(uint16_t port, const char* from = "127.0.0.1", bool blocking = true) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (blocking ? 0 : SOCK_NONBLOCK), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, from, &a.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads the server's challenge frame from a raw socket.
bool read_challenge(int fd) {
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  proto::FrameHeader h;
  if (recv(fd, &h, sizeof h, MSG_WAITALL) != static_cast<ssize_t>(sizeof h)) return false;
  std::vector<char> args(h.args_len);
  return h.op == proto::kOpChallenge &&
         recv(fd, args.data(), args.size(), MSG_WAITALL) == static_cast<ssize_t>(args.size());
}

// Waits up to `limit` for the server to close raw socket `fd`; how long it took, or -1.
double seconds_until_closed(int fd, std::chrono::milliseconds limit) {
  const auto start = Clock::now();
  while (Clock::now() - start < limit) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 50) > 0) {
      char sink[256];
      ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN)) return seconds_since(start);
    }
  }
  return -1;
}

// A hello frame asking for GPU 0 as `name`.
std::vector<uint8_t> hello_frame(const std::string& name = "preauth-test") {
  proto::Hello hello;
  hello.protocol_version = proto::kProtocolVersion;
  hello.cuda_runtime_version = CUDART_VERSION;
  hello.gpus = {0};
  hello.client_name = name;
  proto::Writer w;
  hello.encode(w);
  proto::FrameHeader h{.op = proto::kOpHello};
  h.args_len = static_cast<uint32_t>(w.bytes().size());
  std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + sizeof h);
  out.insert(out.end(), w.bytes().begin(), w.bytes().end());
  return out;
}

// The three ways to stall a hello: one byte of it, a header promising 200
// argument bytes and 10 of them, nothing.
enum class Stall { one_byte, short_arguments, nothing };
constexpr Stall kStalls[] = {Stall::one_byte, Stall::short_arguments, Stall::nothing};

std::vector<uint8_t> stalled_hello(Stall how) {
  std::vector<uint8_t> frame = hello_frame();
  if (how == Stall::nothing) return {};
  if (how == Stall::one_byte) return {frame[0]};
  proto::FrameHeader h{.op = proto::kOpHello};
  h.args_len = 200;
  std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + sizeof h);
  out.insert(out.end(), 10, 0);
  return out;
}

void send_bytes(transport::Connection& c, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) return;
  iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  c.send({&v, 1});
}

// Reads the server's challenge on `c`, then sends a hello stalled `how`.
void stall_after_challenge(transport::Connection& c, Stall how) {
  auto h = proto::recv_header(c);
  std::vector<uint8_t> args;
  proto::recv_args(c, h, args);
  ASSERT_EQ(h.op, proto::kOpChallenge);
  send_bytes(c, stalled_hello(how));
}

// Waits up to `limit` for connection `c` to be closed by the server: a read
// fails. How long it took, or -1.
double seconds_until_broken(transport::Connection& c, std::chrono::milliseconds limit) {
  std::atomic<bool> done{false};
  const auto start = Clock::now();
  double took = -1;
  std::thread reader([&] {
    try {
      char b;
      c.recv(&b, 1);
    } catch (const transport::TransportError&) {
      took = seconds_since(start);
    }
    done = true;
  });
  while (!done && Clock::now() - start < limit) std::this_thread::sleep_for(20ms);
  if (done) {
    reader.join();
    return took;
  }
  c.shutdown();  // still open: wakes the reader, whose failure is ours
  reader.join();
  return -1;
}

// Polls `what` every 50 ms until it holds or `limit` passes.
bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& what) {
  const auto start = Clock::now();
  while (!what()) {
    if (Clock::now() - start > limit) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// A session opened over tcp (raw, GPU 0) and how long it took.
double open_time(uint16_t port, std::unique_ptr<transport::Connection>* session = nullptr) {
  const auto start = Clock::now();
  proto::HelloReply reply;
  auto c = open_raw_session(port, &reply);
  const double took = seconds_since(start);
  EXPECT_EQ(reply.status, cudaSuccess) << reply.message;
  if (session) *session = std::move(c);
  return took;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Raw sockets a test opened, closed when it ends, by a failed assertion too
// (before its server is stopped: an old server may wait on them).
struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) close(fd);
  }
};

void raise_descriptor_limit() {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

TEST(Preauth, StalledTcpAndShmHellosAreClosedByTheHelloDeadline) {
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2"});
  const std::string unix_socket = transport::default_shm_socket(port);
  const auto start = Clock::now();

  Sockets tcp;
  for (Stall how : kStalls) {
    int fd = tcp_socket(port);
    ASSERT_GE(fd, 0);
    tcp.fds.push_back(fd);
    ASSERT_TRUE(read_challenge(fd));
    auto bytes = stalled_hello(how);
    ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // Over shm after offering rings, and a Unix socket that never offers them.
  std::vector<std::unique_ptr<transport::Connection>> shm;
  for (Stall how : kStalls) {
    auto c = transport::make_shm_transport()->connect({unix_socket, 0}, 1000);
    stall_after_challenge(*c, how);
    shm.push_back(std::move(c));
  }
  Sockets unix_sockets;
  const int no_rings = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  unix_sockets.fds.push_back(no_rings);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, unix_socket.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(connect(no_rings, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);

  // Meanwhile a legitimate client is served.
  std::unique_ptr<transport::Connection> session;
  open_time(port, &session);

  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(kHelloTimeout + kSlack);
  for (size_t i = 0; i < tcp.fds.size(); ++i) {
    auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    EXPECT_GE(seconds_until_closed(tcp.fds[i], std::max(left, 1ms)), 0) << "tcp stall " << i << " still open";
  }
  for (size_t i = 0; i < shm.size(); ++i) {
    auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    EXPECT_GE(seconds_until_broken(*shm[i], std::max(left, 1ms)), 0) << "shm stall " << i << " still open";
  }
  auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  EXPECT_GE(seconds_until_closed(no_rings, std::max(left, 1ms)), 0) << "a Unix socket with no rings still open";
  // Their workers are gone: the idle ones and the session's are left.
  EXPECT_TRUE(eventually(3000ms, [&] { return workers_of(server.pid()) <= 3; })) << workers_of(server.pid());
  proto::send_frame(*session, proto::FrameHeader{.op = proto::kOpDeviceSynchronize}, {});
  EXPECT_EQ(reply_status(*session), cudaSuccess);
}

TEST(Preauth, StalledTlsHellosAreClosedByTheHelloDeadline) {
  char dir[] = "/tmp/rgpu-preauth-tls-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  const std::string certs = dir;
  ASSERT_EQ(std::system((std::string(RGPU_MAKE_TLS_CERTS) + " " + certs).c_str()), 0);
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2", "--tls-cert", certs + "/server.pem", "--tls-key",
                              certs + "/server.key", "--unix-socket", "none"});
  auto tls = transport::make_tls_client_transport({"", "", certs + "/ca.pem"});
  const auto start = Clock::now();
  std::vector<std::unique_ptr<transport::Connection>> stalled;
  for (Stall how : kStalls) {
    auto c = tls->connect({"127.0.0.1", port}, 2000);
    stall_after_challenge(*c, how);
    stalled.push_back(std::move(c));
  }
  // A legitimate TLS client is served meanwhile.
  auto c = tls->connect({"127.0.0.1", port}, 2000);
  auto h = proto::recv_header(*c);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  auto hello = hello_frame();
  send_bytes(*c, hello);
  h = proto::recv_header(*c);
  proto::recv_args(*c, h, args);
  proto::Reader r(args);
  EXPECT_EQ(proto::HelloReply::decode(r).status, cudaSuccess);

  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(kHelloTimeout + kSlack);
  for (size_t i = 0; i < stalled.size(); ++i) {
    auto left = limit - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    EXPECT_GE(seconds_until_broken(*stalled[i], std::max(left, 1ms)), 0) << "TLS stall " << i << " still open";
  }
  EXPECT_TRUE(eventually(3000ms, [&] { return workers_of(server.pid()) <= 3; })) << workers_of(server.pid());
  std::filesystem::remove_all(certs);
}

TEST(Preauth, ThousandSilentConnectionsDoNotDelayASession) {
  raise_descriptor_limit();
  const uint16_t port = free_port();
  // Few session slots: silent connections that took them would lock every
  // client out.
  ServerProcess server(port, {"--workers", "2", "--max-sessions", "4", "--unix-socket", "none"});
  // On an idle server (the best of a few, as below).
  double idle = 1e9;
  for (int i = 0; i < 3; ++i) idle = std::min(idle, open_time(port));

  // 1,000 connections from another address of this host: every other one
  // sends one byte of its hello, the rest nothing.
  Sockets flood;
  for (int i = 0; i < 1000; ++i) {
    int fd = tcp_socket(port, "127.0.0.2", false);
    if (fd >= 0) flood.fds.push_back(fd);
  }
  ASSERT_GE(flood.fds.size(), 900u);
  std::this_thread::sleep_for(300ms);
  for (size_t i = 0; i < flood.fds.size(); i += 2) send(flood.fds[i], "\x50", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  std::this_thread::sleep_for(700ms);

  double loaded = 1e9;
  std::vector<std::unique_ptr<transport::Connection>> sessions;
  for (int i = 0; i < 3; ++i) {
    std::unique_ptr<transport::Connection> s;
    loaded = std::min(loaded, open_time(port, &s));
    sessions.push_back(std::move(s));
  }
  RecordProperty("idle_open_ms", static_cast<int>(idle * 1000));
  RecordProperty("flooded_open_ms", static_cast<int>(loaded * 1000));
  EXPECT_LE(loaded, idle + 0.1) << "idle " << idle << " s, under the flood " << loaded << " s";
}

TEST(Preauth, SilentConnectionsDoNotTakeSessionSlots) {
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2", "--max-sessions", "2", "--unix-socket", "none"});
  // More silent connections than session slots, from the client's own host.
  Sockets silent;
  for (int i = 0; i < 6; ++i) silent.fds.push_back(tcp_socket(port));
  std::this_thread::sleep_for(500ms);
  std::unique_ptr<transport::Connection> a, b;
  open_time(port, &a);
  open_time(port, &b);
  // The slots are the sessions': a third is refused at admission, with the reason.
  proto::HelloReply third;
  auto c = open_raw_session(port, &third);
  EXPECT_EQ(third.status, cudaErrorDevicesUnavailable);
  EXPECT_NE(third.message.find("max-sessions 2"), std::string::npos) << third.message;
}

TEST(Preauth, UnauthenticatedConnectionsAreBoundedPerSource) {
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2", "--max-unauthenticated-per-client", "2", "--hello-timeout", "2",
                              "--unix-socket", "none"});
  // Two in their hello, two queued behind them; the fifth is turned away at
  // once with the reason.
  Sockets held;
  for (int i = 0; i < 4; ++i) held.fds.push_back(tcp_socket(port, "127.0.0.2"));
  std::this_thread::sleep_for(500ms);
  const int fifth = tcp_socket(port, "127.0.0.2");
  held.fds.push_back(fifth);
  ASSERT_TRUE(read_challenge(fifth));
  auto hello = hello_frame();
  send(fifth, hello.data(), hello.size(), MSG_NOSIGNAL);
  proto::FrameHeader h;
  ASSERT_EQ(recv(fifth, &h, sizeof h, MSG_WAITALL), static_cast<ssize_t>(sizeof h));
  std::vector<uint8_t> args(h.args_len);
  ASSERT_EQ(recv(fifth, args.data(), args.size(), MSG_WAITALL), static_cast<ssize_t>(args.size()));
  proto::Reader r(args);
  auto reply = proto::HelloReply::decode(r);
  EXPECT_EQ(reply.status, cudaErrorDevicesUnavailable);
  EXPECT_NE(reply.message.find("max-unauthenticated-per-client 2"), std::string::npos) << reply.message;
  // Another host is not held back.
  std::unique_ptr<transport::Connection> session;
  open_time(port, &session);
  // Those in hello are cut off by the deadline, and then those queued (whose
  // deadline ran from accept).
  for (int i = 0; i < 4; ++i)
    EXPECT_GE(seconds_until_closed(held.fds[i], 5000ms), 0) << "connection " << i << " still open";
}

namespace {

// A raw session on the server on `port`, whose join port is open.
void open_with_join_port(uint16_t port, proto::HelloReply* hello, std::unique_ptr<transport::Connection>* session) {
  *session = open_raw_session(port, hello);
  ASSERT_EQ(hello->status, cudaSuccess) << hello->message;
  ASSERT_NE(hello->join_port, 0);
}

}  // namespace

TEST(Preauth, JoinPortFloodStartsNoThreadPerConnection) {
  raise_descriptor_limit();
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "1", "--unix-socket", "none"});
  proto::HelloReply hello;
  std::unique_ptr<transport::Connection> session;
  ASSERT_NO_FATAL_FAILURE(open_with_join_port(port, &hello, &session));
  const size_t before = threads_of(hello.worker_pid);
  Sockets flood;
  for (int i = 0; i < 1000; ++i) {
    int fd = tcp_socket(hello.join_port, "127.0.0.1", false);
    if (fd >= 0) flood.fds.push_back(fd);
  }
  ASSERT_GE(flood.fds.size(), 900u);
  std::this_thread::sleep_for(1000ms);
  const size_t during = threads_of(hello.worker_pid);
  // A few joins in their hello at once, not one thread each.
  EXPECT_LE(during, before + 32) << before << " threads before, " << during << " during the flood";
  proto::send_frame(*session, proto::FrameHeader{.op = proto::kOpDeviceSynchronize, .seq = 1}, {});
  EXPECT_EQ(reply_status(*session), cudaSuccess);
}

// A session's join port closes at once what comes from another host than
// the session's client (well before the hello deadline), so no other host
// can hold its join slots; the client's own host still joins.
TEST(Preauth, JoinsFromAnotherHostAreClosedAtOnce) {
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "1", "--unix-socket", "none"});
  proto::HelloReply hello;
  std::unique_ptr<transport::Connection> session;
  ASSERT_NO_FATAL_FAILURE(open_with_join_port(port, &hello, &session));
  Sockets others;
  for (int i = 0; i < 20; ++i) others.fds.push_back(tcp_socket(hello.join_port, "127.0.0.2"));
  for (int fd : others.fds) {
    const double closed = seconds_until_closed(fd, 3000ms);
    EXPECT_GE(closed, 0) << "a join from another host was held open";
    EXPECT_LT(closed, 1.0);
  }
  auto join = transport::make_tcp_transport()->connect({"127.0.0.1", hello.join_port}, 1000);
  EXPECT_EQ(raw_join(*join, hello.join_secret).status, cudaSuccess);
}

TEST(Preauth, SilentUcxConnectionsAreCutOffAndHoldUpNoJoin) {
  if (transport::ucx_module_path().empty()) GTEST_SKIP() << "built without the ucx transport";
  const uint16_t port = free_port(), ucx_port = free_port();
  ServerProcess server(port, {"--workers", "2", "--ucx-port", std::to_string(ucx_port), "--unix-socket", "none"});
  // One on the ucx port that never starts UCX's address swap.
  Sockets silent;
  silent.fds.push_back(tcp_socket(ucx_port));
  auto ucx = transport::make_ucx_transport();
  auto first = ucx->connect({"127.0.0.1", ucx_port}, 5000);
  auto h = proto::recv_header(*first);
  std::vector<uint8_t> args;
  proto::recv_args(*first, h, args);
  send_bytes(*first, hello_frame());
  h = proto::recv_header(*first);
  proto::recv_args(*first, h, args);
  proto::Reader r(args);
  auto hello = proto::HelloReply::decode(r);
  ASSERT_EQ(hello.status, cudaSuccess) << hello.message;
  ASSERT_NE(hello.join_port, 0);
  // One to the session's join port likewise...
  silent.fds.push_back(tcp_socket(hello.join_port));
  std::this_thread::sleep_for(200ms);
  // ...does not keep the session's next thread from joining.
  const auto start = Clock::now();
  auto joined = std::async(std::launch::async, [&] {
    try {
      auto join = ucx->connect({"127.0.0.1", hello.join_port}, 3000);
      proto::Writer w;
      proto::Join{hello.join_secret, proto::kJoinCalls}.encode(w);
      proto::send_frame(*join, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
      if (!join->wait_readable(3000)) return cudaErrorTimeout;
      std::vector<uint8_t> reply;
      proto::recv_args(*join, proto::recv_header(*join), reply);
      proto::Reader jr(reply);
      return static_cast<cudaError_t>(proto::JoinReply::decode(jr).status);
    } catch (const std::exception&) {
      return cudaErrorUnknown;
    }
  });
  if (joined.wait_for(4s) != std::future_status::ready) {
    ADD_FAILURE() << "the join was not answered";
    stop_server(server.pid(), SIGKILL);  // ends the client's wait on it
  }
  EXPECT_EQ(joined.get(), cudaSuccess);
  EXPECT_LT(seconds_since(start), 2.0);
  // The silent ones are cut off by the hello deadline.
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(kHelloTimeout + kSlack);
  for (int fd : silent.fds) EXPECT_GE(seconds_until_closed(fd, limit), 0);
}

// Shared rings as a client offers them, laid out as the shm transport's
// (shm_ring_connection.cpp), with the server-to-client ring already full.
int full_rings() {
  constexpr size_t kRing = 1u << 20, kControl = 4096, kBytes = kControl + 2 * kRing;
  int fd = memfd_create("preauth-full-rings", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, kBytes) != 0) return -1;
  void* base = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return -1;
  auto* control = static_cast<transport::RingControl*>(base);
  for (int ring = 0; ring < 2; ++ring) new (control + ring) transport::RingControl{};
  control[1].head = kRing;  // server to client: full, never read
  munmap(base, kBytes);
  return fd;
}

TEST(Preauth, FullShmRingAtMaxSessionsDoesNotBlockTheDaemon) {
  const uint16_t port = free_port();
  ServerProcess server(port, {"--workers", "2", "--max-sessions", "1"});
  std::unique_ptr<transport::Connection> first;
  open_time(port, &first);
  // At max-sessions: shm clients whose rings the server cannot write to.
  const std::string unix_socket = transport::default_shm_socket(port);
  Sockets attackers;
  for (int i = 0; i < 4; ++i) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, unix_socket.c_str(), sizeof addr.sun_path - 1);
    attackers.fds.push_back(fd);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    int rings = full_rings();
    ASSERT_GE(rings, 0);
    char tag = 'R';
    ASSERT_TRUE(transport::send_byte_with_descriptor(fd, &tag, rings));
    close(rings);
  }
  std::this_thread::sleep_for(300ms);
  // The daemon still answers others at once: a tcp client is refused with
  // the reason (max-sessions) promptly.
  const auto start = Clock::now();
  auto c = transport::make_tcp_transport()->connect({"127.0.0.1", port}, 1000);
  ASSERT_TRUE(c->wait_readable(3000)) << "no challenge: the daemon is blocked";
  auto h = proto::recv_header(*c);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  send_bytes(*c, hello_frame());
  ASSERT_TRUE(c->wait_readable(3000)) << "no hello reply";
  h = proto::recv_header(*c);
  proto::recv_args(*c, h, args);
  proto::Reader r(args);
  auto reply = proto::HelloReply::decode(r);
  EXPECT_NE(reply.status, cudaSuccess);
  EXPECT_NE(reply.message.find("max-sessions"), std::string::npos) << reply.message;
  EXPECT_LT(seconds_since(start), 2.0);
  // Once the first session ends, a new one is admitted.
  first.reset();
  std::unique_ptr<transport::Connection> next;
  EXPECT_TRUE(eventually(3000ms, [&] {
    proto::HelloReply again;
    next = open_raw_session(port, &again);
    return again.status == cudaSuccess;
  }));
}

TEST(Preauth, ClientNameIsEscapedInTheLog) {
  const uint16_t port = free_port();
  const std::string log = "/tmp/rgpu-preauth-log-" + std::to_string(getpid()) + "-name";
  pid_t pid = start_server(port, {"--workers", "1", "--unix-socket", "none"}, log);
  {
    int fd = tcp_socket(port);
    ASSERT_TRUE(read_challenge(fd));
    auto hello = hello_frame("evil\nrgpu-server: FORGED line\x1b[31m");
    ASSERT_EQ(send(fd, hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
    proto::FrameHeader h;
    ASSERT_EQ(recv(fd, &h, sizeof h, MSG_WAITALL), static_cast<ssize_t>(sizeof h));
    close(fd);
  }
  std::this_thread::sleep_for(300ms);
  stop_server(pid);
  const std::string text = read_file(log);
  std::filesystem::remove(log);
  EXPECT_NE(text.find("evil"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nrgpu-server: FORGED"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("evil\\x0argpu-server: FORGED line\\x1b[31m"), std::string::npos) << text;
}

// What a client may repeat at will logs a bounded number of lines, whatever
// the call: unknown calls, and calls refused for what they name (here an
// IPC handle of another server).
TEST(Preauth, RepeatedPeerTriggeredWarningsLogABoundedNumberOfLines) {
  const uint16_t port = free_port();
  const std::string log = "/tmp/rgpu-preauth-log-" + std::to_string(getpid()) + "-ops";
  pid_t pid = start_server(port, {"--workers", "1", "--unix-socket", "none"}, log);
  {
    auto c = open_raw_session(port);
    for (int i = 0; i < 200; ++i) {
      proto::send_frame(*c, proto::FrameHeader{.op = 0xfffe}, {});
      EXPECT_EQ(reply_status(*c), cudaErrorNotSupported);
      proto::Writer w;
      w.put<uint64_t>(0x5eedull).put(std::array<uint8_t, 16>{}).put<uint32_t>(0);  // server, token, flags
      proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpIpcOpenMemHandle}, w.bytes());
      EXPECT_EQ(reply_status(*c), cudaErrorInvalidResourceHandle);
    }
  }
  std::this_thread::sleep_for(300ms);
  stop_server(pid);
  const std::string text = read_file(log);
  std::filesystem::remove(log);
  for (const char* what : {"unknown call", "IPC handle of another rgpu server"}) {
    const size_t lines = count_of(text, what);
    EXPECT_GE(lines, 1u) << what;
    EXPECT_LE(lines, 10u) << what << ":\n" << text;
  }
}

}  // namespace
}  // namespace rgpu::test
