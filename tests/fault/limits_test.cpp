// Server limits (max-sessions, max-sessions-per-client,
// max-session-connections, max-frame-bytes, max-session-memory,
// idle-timeout): past each, the client is told which limit it met, and the
// server and other clients carry on.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "test_server.hpp"
#include "transport/transport.hpp"

using namespace rgpu;
using namespace rgpu::test;

namespace {

// A server with the given limits for one test.
class Limited {
 public:
  explicit Limited(std::vector<std::string> flags) : port_(free_port()), process_(port_, with_one_worker(flags)) {}
  uint16_t port() const { return port_; }
  // A session over `transport`; null with *why when refused.
  std::unique_ptr<client::Session> open(const char* transport, std::string* why) const {
    return client::Session::open({"127.0.0.1", port_}, transport, {0}, why);
  }

 private:
  static std::vector<std::string> with_one_worker(std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--workers", "1"});
    return flags;
  }
  uint16_t port_;
  ServerProcess process_;
};

// Opens sessions until one is admitted or seconds pass: the daemon frees a
// session's place once its worker has gone.
std::unique_ptr<client::Session> open_within(const Limited& server, const char* transport, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string why;
  for (;;) {
    if (auto s = server.open(transport, &why)) return s;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << why;
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

cudaError_t malloc_on(client::Session& s, uint64_t size, uint64_t* ptr) {
  std::vector<uint8_t> reply;
  proto::Writer w;
  w.put<uint64_t>(size);
  cudaError_t e = s.call(proto::kOpMalloc, 0, w.bytes(), {}, reply);
  if (e == cudaSuccess) {
    proto::Reader r(reply);
    *ptr = r.get<uint64_t>();
  }
  return e;
}

cudaError_t free_on(client::Session& s, uint64_t ptr) {
  std::vector<uint8_t> reply;
  proto::Writer w;
  w.put<uint64_t>(ptr);
  return s.call(proto::kOpFree, 0, w.bytes(), {}, reply);
}

cudaError_t synchronize(client::Session& s) {
  std::vector<uint8_t> reply;
  return s.call(proto::kOpDeviceSynchronize, 0, {}, {}, reply);
}

}  // namespace

TEST(ServerLimits, MaxSessionsTurnsTheNextClientAwayWithTheReason) {
  for (const char* transport : {"tcp", "shm"}) {
    SCOPED_TRACE(transport);
    Limited server({"--max-sessions", "2"});
    // The connection that found the server listening holds a place until
    // its worker has seen it go.
    auto a = open_within(server, transport, 5);
    auto b = open_within(server, transport, 5);
    ASSERT_TRUE(a && b);
    std::string why;
    EXPECT_FALSE(server.open(transport, &why));
    EXPECT_NE(why.find("max-sessions 2"), std::string::npos) << why;
    // The sessions admitted are unaffected, and a place freed is taken.
    EXPECT_EQ(synchronize(*a), cudaSuccess);
    b.reset();
    auto c = open_within(server, transport, 5);
    ASSERT_TRUE(c);
    EXPECT_EQ(synchronize(*c), cudaSuccess);
  }
}

// Each client identity (here: host 127.0.0.1 over tcp, this user over the
// Unix socket) has its own count.
TEST(ServerLimits, MaxSessionsPerClientCountsEachClientApart) {
  Limited server({"--max-sessions-per-client", "2"});
  std::string why;
  auto a = server.open("tcp", &why);
  auto b = server.open("tcp", &why);
  ASSERT_TRUE(a && b) << why;
  EXPECT_FALSE(server.open("tcp", &why));
  EXPECT_NE(why.find("max-sessions-per-client 2"), std::string::npos) << why;
  EXPECT_NE(why.find("host 127.0.0.1"), std::string::npos) << why;
  auto local = server.open("shm", &why);
  ASSERT_TRUE(local) << why;
  EXPECT_EQ(synchronize(*local), cudaSuccess);
  EXPECT_EQ(synchronize(*a), cudaSuccess);
  a.reset();
  auto c = open_within(server, "tcp", 5);
  ASSERT_TRUE(c);
  EXPECT_EQ(synchronize(*c), cudaSuccess);
}

TEST(ServerLimits, MaxSessionConnectionsRefusesAJoinWithTheReason) {
  Limited server({"--max-session-connections", "2"});
  proto::HelloReply hello;
  auto first = open_raw_session(server.port(), &hello);
  ASSERT_EQ(hello.status, cudaSuccess) << hello.message;
  auto join = [&] {
    auto c = transport::make_tcp_transport()->connect({"127.0.0.1", hello.join_port}, 1000);
    proto::Writer w;
    proto::Join{hello.join_secret, proto::kJoinCalls}.encode(w);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpJoin}, w.bytes());
    auto h = proto::recv_header(*c);
    std::vector<uint8_t> args;
    proto::recv_args(*c, h, args);
    proto::Reader r(args);
    return std::make_pair(std::move(c), proto::JoinReply::decode(r));
  };
  auto [second, ok] = join();
  EXPECT_EQ(ok.status, cudaSuccess) << ok.message;
  auto [third, refused] = join();
  EXPECT_EQ(refused.status, cudaErrorDevicesUnavailable);
  EXPECT_NE(refused.message.find("max-session-connections 2"), std::string::npos) << refused.message;
  // The session's own connections still serve it.
  proto::send_frame(*second, proto::FrameHeader{.op = proto::kOpDeviceSynchronize, .seq = 1}, {});
  EXPECT_EQ(reply_status(*second), cudaSuccess);
}

TEST(ServerLimits, MaxFrameBytesRefusesTheCallAndKeepsTheSession) {
  Limited server({"--max-frame-bytes", "4K"});
  auto c = open_raw_session(server.port());
  std::vector<uint8_t> big(8192, 1);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc}, big);
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidValue);
  // In step after it: the next call on the connection is answered.
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpDeviceSynchronize}, {});
  EXPECT_EQ(reply_status(*c), cudaSuccess);
}

TEST(ServerLimits, MaxSessionMemoryRefusesAllocationsPastIt) {
  Limited server({"--max-session-memory", "1M"});
  std::string why;
  auto s = server.open("tcp", &why);
  ASSERT_TRUE(s) << why;
  uint64_t a = 0, b = 0;
  ASSERT_EQ(malloc_on(*s, 512 << 10, &a), cudaSuccess);
  EXPECT_EQ(malloc_on(*s, 768 << 10, &b), cudaErrorMemoryAllocation);
  EXPECT_EQ(malloc_on(*s, 2ull << 40, &b), cudaErrorMemoryAllocation);
  // Stream-ordered allocations count too.
  std::vector<uint8_t> reply;
  proto::Writer async;
  async.put<uint64_t>(768 << 10).put<uint64_t>(0).put<uint64_t>(0);
  EXPECT_EQ(s->call(proto::kOpMallocAsync, 0, async.bytes(), {}, reply), cudaErrorMemoryAllocation);
  ASSERT_EQ(free_on(*s, a), cudaSuccess);
  EXPECT_EQ(malloc_on(*s, 768 << 10, &b), cudaSuccess);
  // Another session has its own allowance.
  auto other = server.open("tcp", &why);
  ASSERT_TRUE(other) << why;
  EXPECT_EQ(malloc_on(*other, 768 << 10, &a), cudaSuccess);
}

TEST(ServerLimits, IdleTimeoutEndsTheSessionAndSaysWhy) {
  Limited server({"--idle-timeout", "1"});
  auto c = open_raw_session(server.port());
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpDeviceSynchronize}, {});
  EXPECT_EQ(reply_status(*c), cudaSuccess);
  ASSERT_TRUE(c->wait_readable(5000));
  auto h = proto::recv_header(*c);
  EXPECT_EQ(h.op, proto::kOpGoodbye);
  std::vector<uint8_t> args;
  proto::recv_args(*c, h, args);
  proto::Reader r(args);
  EXPECT_NE(r.get_string().find("idle-timeout"), std::string::npos);
  // Through the client: its next call fails at once, and new sessions work.
  std::string why;
  auto s = server.open("tcp", &why);
  ASSERT_TRUE(s) << why;
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(synchronize(*s), cudaErrorDevicesUnavailable);
  auto fresh = server.open("tcp", &why);
  ASSERT_TRUE(fresh) << why;
  EXPECT_EQ(synchronize(*fresh), cudaSuccess);
}

// A 2-D copy's rows are staged whole: rows wider than the worker stages
// (64 MB) are refused before any memory is sized by them.
TEST(ServerLimits, RowsWiderThanTheStagingLimitAreRefused) {
  Limited server({});
  std::string why;
  auto s = server.open("tcp", &why);
  ASSERT_TRUE(s) << why;
  const uint64_t wide = 80ull << 20;
  uint64_t ptr = 0;
  ASSERT_EQ(malloc_on(*s, wide, &ptr), cudaSuccess);
  std::vector<uint8_t> reply;
  proto::Writer d2h;
  d2h.put<uint64_t>(ptr).put<uint64_t>(wide).put<uint64_t>(wide).put<uint64_t>(1).put<uint64_t>(0);
  EXPECT_EQ(s->call(proto::kOpMemcpy2DDtoH, 0, d2h.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  EXPECT_EQ(free_on(*s, ptr), cudaSuccess);
}
