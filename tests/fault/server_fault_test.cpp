// Bad input against a live rgpu-server (host-memory test backend): each case
// must get an error reply or end only its own session, and the daemon and
// other sessions must keep working.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "transport/transport.hpp"

using namespace rgpu;

namespace {

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

class ServerFault : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    port_ = free_port();
    log_ = ::testing::TempDir() + "/rgpu-fault-server.log";
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      freopen(log_.c_str(), "w", stderr);
      std::string port = std::to_string(port_);
      execl(RGPU_SERVER_BIN, RGPU_SERVER_BIN, "--backend", "host-test", "--listen", "127.0.0.1", "--port",
            port.c_str(), "--workers", "2", "--module-cache", "", "--log-level", "info", nullptr);
      _exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      try {
        transport::make_tcp_transport()->connect(endpoint(), 1000);
        return;
      } catch (const transport::TransportError&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    FAIL() << "server did not start";
  }
  static void TearDownTestSuite() {
    kill(-pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  static transport::Endpoint endpoint() { return {"127.0.0.1", port_}; }

  static std::unique_ptr<client::Session> session() {
    std::string why;
    auto s = client::Session::open(endpoint(), {0}, &why);
    EXPECT_TRUE(s) << why;
    return s;
  }
  static std::unique_ptr<transport::Connection> raw() {
    return transport::make_tcp_transport()->connect(endpoint(), 1000);
  }
  // A raw connection that has completed the handshake.
  static std::unique_ptr<transport::Connection> raw_session() {
    auto c = raw();
    proto::Hello hello{proto::kProtocolVersion, CUDART_VERSION, {0}, "fault-test"};
    proto::Writer w;
    hello.encode(w);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
    auto h = proto::recv_header(*c);
    std::vector<uint8_t> args;
    proto::recv_args(*c, h, args);
    return c;
  }
  static int32_t reply_status(transport::Connection& c) {
    auto h = proto::recv_header(c);
    std::vector<uint8_t> args;
    proto::recv_args(c, h, args);
    EXPECT_EQ(h.op, proto::kOpReply);
    EXPECT_EQ(h.payload_len, 0u);
    proto::ReplyPrefix p;
    std::memcpy(&p, args.data(), sizeof p);
    return p.status;
  }
  // The server closes the connection: reading hits EOF within a few seconds.
  static bool closed_by_server(transport::Connection& c) {
    if (!c.wait_readable(5000)) return false;
    char b;
    try {
      c.recv(&b, 1);
      return false;
    } catch (const transport::TransportError&) {
      return true;
    }
  }
  // A full, well-behaved session: allocate, copy round trip, free.
  static void expect_healthy() {
    auto s = session();
    ASSERT_TRUE(s);
    std::vector<uint8_t> reply;
    proto::Writer w;
    w.put<uint64_t>(4096);
    ASSERT_EQ(s->call(proto::kOpMalloc, 0, w.bytes(), {}, reply), cudaSuccess);
    proto::Reader r(reply);
    uint64_t ptr = r.get<uint64_t>();
    std::vector<uint8_t> data(4096, 0x5a), back(4096);
    proto::Writer h2d;
    h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
    iovec v{data.data(), data.size()};
    ASSERT_EQ(s->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply), cudaSuccess);
    proto::Writer d2h;
    d2h.put<uint64_t>(ptr).put<uint64_t>(4096).put<uint64_t>(0);
    ASSERT_EQ(s->call_into(proto::kOpMemcpyDtoH, 0, d2h.bytes(), back.data(), back.size(), reply), cudaSuccess);
    EXPECT_EQ(back, data);
  }

  static inline pid_t pid_;
  static inline uint16_t port_;
  static inline std::string log_;
};

TEST_F(ServerFault, GarbageInsteadOfHelloClosesOnlyThatConnection) {
  auto c = raw();
  std::vector<uint8_t> junk(1000);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 97);
  iovec v{junk.data(), junk.size()};
  c->send({&v, 1});
  EXPECT_TRUE(closed_by_server(*c));
  expect_healthy();
}

TEST_F(ServerFault, TruncatedFramesAndVanishingClients) {
  for (size_t cut : {1, 10, 23, 30}) {
    auto c = raw();
    proto::Hello hello{proto::kProtocolVersion, CUDART_VERSION, {0}, "cut"};
    proto::Writer w;
    hello.encode(w);
    proto::FrameHeader h{proto::kFrameMagic, proto::kOpHello, 0, static_cast<uint32_t>(w.size()), 0, 0};
    std::vector<uint8_t> frame(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + sizeof h);
    frame.insert(frame.end(), w.bytes().begin(), w.bytes().end());
    iovec v{frame.data(), std::min(cut, frame.size())};
    c->send({&v, 1});
  }
  expect_healthy();
}

TEST_F(ServerFault, WrongProtocolVersionIsRefusedWithAReason) {
  auto c = raw();
  proto::Hello hello{proto::kProtocolVersion + 100, CUDART_VERSION, {0}, "old"};
  proto::Writer w;
  hello.encode(w);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
  auto h = proto::recv_header(*c);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  proto::Reader r(args);
  auto reply = proto::HelloReply::decode(r);
  EXPECT_NE(reply.status, 0);
  EXPECT_NE(reply.message.find("protocol version"), std::string::npos);
}

TEST_F(ServerFault, UnexportedGpuIsRefused) {
  std::string why;
  EXPECT_FALSE(client::Session::open(endpoint(), {7}, &why));
  EXPECT_NE(why.find("not exported"), std::string::npos) << why;
}

TEST_F(ServerFault, UnknownCallAndMalformedArgumentsGetErrorReplies) {
  auto c = raw_session();
  proto::send_frame(*c, proto::FrameHeader{.op = 999}, {});
  EXPECT_EQ(reply_status(*c), cudaErrorNotSupported);
  uint8_t three[3] = {1, 2, 3};
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc}, three);
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidValue);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc, .device = 5}, {});
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidDevice);
  // Still in step: a valid call works on the same connection.
  proto::Writer w;
  w.put<uint64_t>(64);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc}, w.bytes());
  EXPECT_EQ(reply_status(*c), cudaSuccess);
}

TEST_F(ServerFault, BadMagicEndsTheSession) {
  auto c = raw_session();
  proto::FrameHeader h{0xdeadbeef, proto::kOpMalloc, 0, 0, 0, 0};
  iovec v{&h, sizeof h};
  c->send({&v, 1});
  EXPECT_TRUE(closed_by_server(*c));
  expect_healthy();
}

TEST_F(ServerFault, PointersOfAnotherSessionAndPastTheEndAreRefused) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  std::vector<uint8_t> data(512, 1);
  iovec v{data.data(), 256};
  proto::Writer h2d;
  h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
  // b does not own a's memory; its payload is drained and b carries on.
  EXPECT_EQ(b->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply), cudaErrorInvalidValue);
  proto::Writer f;
  f.put<uint64_t>(ptr);
  EXPECT_EQ(b->call(proto::kOpFree, 0, f.bytes(), {}, reply), cudaErrorInvalidValue);
  // Past the end of a's allocation, both directions.
  iovec big{data.data(), 257};
  EXPECT_EQ(a->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&big, 1}, reply), cudaErrorInvalidValue);
  proto::Writer d2h;
  d2h.put<uint64_t>(ptr + 200).put<uint64_t>(57).put<uint64_t>(0);
  EXPECT_EQ(a->call_into(proto::kOpMemcpyDtoH, 0, d2h.bytes(), data.data(), 57, reply), cudaErrorInvalidValue);
  proto::Writer set;
  set.put<uint64_t>(ptr).put<int32_t>(0).put<uint64_t>(1 << 20).put<uint64_t>(0);
  EXPECT_EQ(a->call(proto::kOpMemset, 0, set.bytes(), {}, reply), cudaErrorInvalidValue);
  // Bogus stream, event and kernel handles.
  proto::Writer sync;
  sync.put<uint64_t>(0x1234567);
  EXPECT_EQ(a->call(proto::kOpStreamSynchronize, 0, sync.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(a->call(proto::kOpEventQuery, 0, sync.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer launch;
  launch.put<uint64_t>(0x42).put(dim3(1)).put(dim3(1)).put<uint32_t>(0).put<uint64_t>(0).put_bytes(nullptr, 0);
  EXPECT_EQ(a->call(proto::kOpLaunchKernel, 0, launch.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  // Both sessions still work.
  EXPECT_EQ(a->call(proto::kOpFree, 0, f.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
}

TEST_F(ServerFault, AsynchronousErrorsSurfaceAtTheNextSynchronousCall) {
  auto s = session();
  std::vector<uint8_t> reply;
  proto::Writer set;
  set.put<uint64_t>(0xbad000).put<int32_t>(0).put<uint64_t>(16).put<uint64_t>(0);
  EXPECT_EQ(s->post(proto::kOpMemset, 0, set.bytes()), cudaSuccess);
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaSuccess);
}

TEST_F(ServerFault, ClientVanishingMidCopyEndsOnlyItsSession) {
  auto other = session();
  {
    auto c = raw_session();
    proto::Writer m;
    m.put<uint64_t>(64 << 20);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc}, m.bytes());
    auto h = proto::recv_header(*c);
    std::vector<uint8_t> args;
    proto::recv_args(*c, h, args);
    uint64_t ptr;
    std::memcpy(&ptr, args.data() + sizeof(proto::ReplyPrefix), sizeof ptr);
    proto::Writer h2d;
    h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
    proto::FrameHeader fh{proto::kFrameMagic, proto::kOpMemcpyHtoD, 0, static_cast<uint32_t>(h2d.size()), 0,
                          64 << 20};
    std::vector<uint8_t> part(1 << 20, 7);
    iovec parts[3] = {{&fh, sizeof fh}, {const_cast<uint8_t*>(h2d.bytes().data()), h2d.size()},
                      {part.data(), part.size()}};
    c->send(parts);
  }  // the client disappears with 63 MB still owed
  std::vector<uint8_t> reply;
  EXPECT_EQ(other->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaSuccess);
  expect_healthy();
}

TEST_F(ServerFault, DeadServerGivesPromptErrors) {
  // A second server, killed while a session is open.
  uint16_t port = free_port();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen("/dev/null", "w", stderr);
    std::string p = std::to_string(port);
    execl(RGPU_SERVER_BIN, RGPU_SERVER_BIN, "--backend", "host-test", "--listen", "127.0.0.1", "--port", p.c_str(),
          "--workers", "1", nullptr);
    _exit(127);
  }
  std::unique_ptr<client::Session> s;
  for (int i = 0; i < 100 && !s; ++i) {
    std::string why;
    s = client::Session::open({"127.0.0.1", port}, {0}, &why);
    if (!s) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(s);
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> reply;
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaErrorDevicesUnavailable);
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaErrorDevicesUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
