// Server limits (max-sessions, max-sessions-per-client,
// max-session-connections, max-frame-bytes, max-session-memory,
// max-session-host-memory, idle-timeout): past each, the client is told which limit it met, and the
// server and other clients carry on.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/graph_node.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "test_server.hpp"
#include "transport/shm/shared_memory.hpp"
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
  // A session over `transport`; null, the reason reported as a failure, when refused.
  std::unique_ptr<client::Session> session(const char* transport) const {
    std::string why;
    auto s = open(transport, &why);
    if (!s) ADD_FAILURE() << why;
    return s;
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
    auto reply = raw_join(*c, hello.join_secret);
    return std::make_pair(std::move(c), reply);
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
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  uint64_t a = 0, b = 0;
  ASSERT_EQ(malloc_on(*s, 512 << 10, &a), cudaSuccess);
  // cudaMemGetInfo tells the session what it may take.
  std::vector<uint8_t> info;
  ASSERT_EQ(s->call(proto::kOpMemGetInfo, 0, {}, {}, info), cudaSuccess);
  proto::Reader free_and_total(info);
  EXPECT_EQ(free_and_total.get<uint64_t>(), 512u << 10);
  EXPECT_EQ(free_and_total.get<uint64_t>(), 1u << 20);
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
  auto other = server.session("tcp");
  ASSERT_TRUE(other);
  EXPECT_EQ(malloc_on(*other, 768 << 10, &a), cudaSuccess);
}

namespace {

// One way a session allocates device memory, and how it frees it.
struct AllocationPath {
  const char* name;
  // Allocates 2 MiB; the handle or pointer in *made.
  std::function<cudaError_t(client::Session&, uint64_t* made)> allocate;
  std::function<cudaError_t(client::Session&, uint64_t made)> free;
};

constexpr uint64_t kTwoMiB = 2 << 20;

cudaError_t call_for_handle(client::Session& s, uint16_t op, const proto::Writer& w, uint64_t* made) {
  std::vector<uint8_t> reply;
  cudaError_t e = s.call(op, 0, w.bytes(), {}, reply);
  if (e == cudaSuccess) *made = proto::Reader(reply).get<uint64_t>();
  return e;
}

cudaError_t call_on_handle(client::Session& s, uint16_t op, uint64_t handle) {
  std::vector<uint8_t> reply;
  proto::Writer w;
  w.put<uint64_t>(handle);
  if (op == proto::kOpFreeAsync) w.put<uint64_t>(0);  // the stream
  return s.call(op, 0, w.bytes(), {}, reply);
}

// 2 MiB from `pool` (0: the device's current one) on the null stream.
cudaError_t malloc_async_on(client::Session& s, uint64_t pool, uint64_t* made) {
  proto::Writer w;
  w.put<uint64_t>(kTwoMiB).put<uint64_t>(pool).put<uint64_t>(0);
  return call_for_handle(s, proto::kOpMallocAsync, w, made);
}

// A float array of 1024 x 512: 2 MiB.
proto::Writer array_spec() {
  proto::Writer w;
  w.put(cudaChannelFormatDesc{32, 0, 0, 0, cudaChannelFormatKindFloat}).put(cudaExtent{1024, 512, 0}).put<uint32_t>(0);
  return w;
}

// kOpMallocAt: each {base, size} made at its own address.
cudaError_t malloc_at_on(client::Session& s, const std::vector<std::pair<uint64_t, uint64_t>>& list) {
  proto::Writer w;
  w.put<uint32_t>(static_cast<uint32_t>(list.size()));
  for (auto [base, size] : list) w.put<uint64_t>(base).put<uint64_t>(size);
  std::vector<uint8_t> reply;
  return s.call(proto::kOpMallocAt, 0, w.bytes(), {}, reply);
}

std::vector<AllocationPath> device_allocation_paths() {
  auto freed_by = [](uint16_t op) {
    return [op](client::Session& s, uint64_t made) { return call_on_handle(s, op, made); };
  };
  return {
      {"linear", [](client::Session& s, uint64_t* made) { return malloc_on(s, kTwoMiB, made); }, freed_by(proto::kOpFree)},
      {"pitched",
       [](client::Session& s, uint64_t* made) {
         proto::Writer w;
         w.put<uint64_t>(2048).put<uint64_t>(1024);
         return call_for_handle(s, proto::kOpMallocPitch, w, made);
       },
       freed_by(proto::kOpFree)},
      {"stream-ordered", [](client::Session& s, uint64_t* made) { return malloc_async_on(s, 0, made); },
       freed_by(proto::kOpFreeAsync)},
      {"pool",
       [](client::Session& s, uint64_t* made) {
         cudaMemPoolProps props{};
         props.allocType = cudaMemAllocationTypePinned;
         props.location = {cudaMemLocationTypeDevice, 0};
         proto::Writer create;
         create.put(props);
         uint64_t pool = 0;
         if (cudaError_t e = call_for_handle(s, proto::kOpMemPoolCreate, create, &pool)) return e;
         return malloc_async_on(s, pool, made);
       },
       freed_by(proto::kOpFreeAsync)},
      {"cuMemCreate",
       [](client::Session& s, uint64_t* made) {
         CUmemAllocationProp prop{};
         prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
         prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
         prop.location.id = 0;
         proto::Writer w;
         w.put<uint64_t>(kTwoMiB).put(prop);
         return call_for_handle(s, proto::kOpVmmCreate, w, made);
       },
       freed_by(proto::kOpVmmRelease)},
      {"array", [](client::Session& s, uint64_t* made) { return call_for_handle(s, proto::kOpArrayCreate, array_spec(), made); },
       freed_by(proto::kOpArrayDestroy)},
      {"mipmapped array",
       [](client::Session& s, uint64_t* made) {
         proto::Writer w = array_spec();
         w.put<uint32_t>(1);  // levels
         return call_for_handle(s, proto::kOpMipmappedArrayCreate, w, made);
       },
       freed_by(proto::kOpMipmappedArrayDestroy)},
      {"graph memory node",
       [](client::Session& s, uint64_t* made) {
         proto::Writer create;
         create.put<uint32_t>(0);
         uint64_t graph = 0;
         if (cudaError_t e = call_for_handle(s, proto::kOpGraphCreate, create, &graph)) return e;
         proto::GraphNodeParams p;
         p.type = cudaGraphNodeTypeMemAlloc;
         p.width = kTwoMiB;
         proto::Writer w;
         w.put(graph).put<uint32_t>(0);
         proto::put_node(w, p);
         std::vector<uint8_t> reply;
         cudaError_t e = s.call(proto::kOpGraphAddNode, 0, w.bytes(), {}, reply);
         if (e == cudaSuccess) {
           proto::Reader r(reply);
           r.get<uint64_t>();  // the node
           *made = r.get<uint64_t>();
         }
         return e;
       },
       freed_by(proto::kOpFree)},  // memory its graph leaves allocated is the session's to free
      {"managed (shm)",
       [](client::Session& s, uint64_t* made) {
         // A memfd mapped at an address free here and in the worker, as the
         // client's managed memory is.
         static std::atomic<uint64_t> next{0x6f0000000000ull};
         *made = next.fetch_add(16 * kTwoMiB);
         int fd = transport::create_sealed_memfd("rgpu-managed-test", kTwoMiB);
         if (fd < 0) return cudaErrorUnknown;
         proto::Writer w;
         w.put<uint64_t>(*made).put<uint64_t>(kTwoMiB);
         std::vector<uint8_t> reply;
         cudaError_t e = s.call_with_fd(proto::kOpManagedMap, 0, w.bytes(), fd, reply);
         close(fd);
         return e;
       },
       freed_by(proto::kOpManagedUnmap)},
      {"at fixed addresses",
       [](client::Session& s, uint64_t* made) {
         static std::atomic<uint64_t> next{0x6e0000000000ull};
         *made = next.fetch_add(16 * kTwoMiB);
         return malloc_at_on(s, {{*made, kTwoMiB}});
       },
       freed_by(proto::kOpFree)},
  };
}

// Device memory at fixed addresses (kOpMallocAt) one byte per page: what the
// pages hold.
cudaError_t one_byte_per_page(client::Session& s, uint64_t base, uint32_t pages) {
  std::vector<std::pair<uint64_t, uint64_t>> list;
  for (uint32_t i = 0; i < pages; ++i) list.push_back({base + i * 2 * kTwoMiB, 1});
  return malloc_at_on(s, list);
}

}  // namespace

// Every allocation path counts against one allowance: past it each is
// refused (and holds nothing), and a free makes room again.
TEST(ServerLimits, MaxSessionMemoryCountsEveryAllocationPath) {
  Limited server({"--max-session-memory", "3M"});
  auto s = server.session("shm");
  ASSERT_TRUE(s);
  for (const AllocationPath& path : device_allocation_paths()) {
    SCOPED_TRACE(path.name);
    uint64_t first = 0, second = 0, linear = 0;
    ASSERT_EQ(path.allocate(*s, &first), cudaSuccess);
    EXPECT_EQ(path.allocate(*s, &second), cudaErrorMemoryAllocation);
    EXPECT_EQ(malloc_on(*s, kTwoMiB, &linear), cudaErrorMemoryAllocation);  // one allowance for all paths
    ASSERT_EQ(path.free(*s, first), cudaSuccess);
    ASSERT_EQ(path.allocate(*s, &second), cudaSuccess);
    ASSERT_EQ(path.free(*s, second), cudaSuccess);
  }
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// Memory made at fixed addresses is charged by the pages mapped, not by the
// bytes asked for: one byte on each of 40 pages holds 80 MiB of the GPU.
TEST(ServerLimits, MemoryAtFixedAddressesIsChargedByThePagesItMaps) {
  Limited server({"--max-session-memory", "64M"});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  const uint64_t base = 0x6d0000000000ull;
  EXPECT_EQ(one_byte_per_page(*s, base, 40), cudaErrorMemoryAllocation);
  ASSERT_EQ(one_byte_per_page(*s, base, 20), cudaSuccess);  // what the refused list held is back
  EXPECT_EQ(one_byte_per_page(*s, base + (1ull << 32), 20), cudaErrorMemoryAllocation);
  for (uint32_t i = 0; i < 20; ++i) ASSERT_EQ(free_on(*s, base + i * 2 * kTwoMiB), cudaSuccess);
  EXPECT_EQ(one_byte_per_page(*s, base + (1ull << 32), 30), cudaSuccess);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// A moved session's virtual memory reservation that lay between its
// allocations (kOpVmmReserveAt) takes a hole of the span kOpMallocAt reserved
// around them; the span lasts until the reservation is freed too. Nothing
// may take the same addresses twice.
TEST(ServerLimits, AReservationBetweenFixedAllocationsBorrowsTheirSpan) {
  Limited server({});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  auto reserve_at = [&](uint64_t base, uint64_t size) {
    proto::Writer w;
    w.put<uint64_t>(base).put<uint64_t>(size);
    std::vector<uint8_t> reply;
    return s->call(proto::kOpVmmReserveAt, 0, w.bytes(), {}, reply);
  };
  auto free_reservation = [&](uint64_t base, uint64_t size) {
    proto::Writer w;
    w.put<uint64_t>(base).put<uint64_t>(size);
    std::vector<uint8_t> reply;
    return s->call(proto::kOpVmmFree, 0, w.bytes(), {}, reply);
  };
  const uint64_t base = 0x6e0000000000ull, hole = base + 8 * kTwoMiB;
  ASSERT_EQ(malloc_at_on(*s, {{base, 4096}, {base + 32 * kTwoMiB, 4096}}), cudaSuccess);
  EXPECT_EQ(reserve_at(hole, 4 * kTwoMiB), cudaSuccess);
  EXPECT_EQ(reserve_at(hole + kTwoMiB, kTwoMiB), cudaErrorInvalidValue);  // reserved already
  EXPECT_NE(reserve_at(base, kTwoMiB), cudaSuccess);                      // an allocation's page
  EXPECT_EQ(reserve_at(0, 0), cudaErrorInvalidValue);
  ASSERT_EQ(free_on(*s, base), cudaSuccess);
  ASSERT_EQ(free_on(*s, base + 32 * kTwoMiB), cudaSuccess);
  EXPECT_NE(malloc_at_on(*s, {{base, 4096}}), cudaSuccess) << "the span lasts while its hole is lent";
  ASSERT_EQ(free_reservation(hole, 4 * kTwoMiB), cudaSuccess);
  EXPECT_EQ(malloc_at_on(*s, {{base, 4096}}), cudaSuccess) << "then it is gone";
  EXPECT_EQ(free_on(*s, base), cudaSuccess);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// The application's threads allocate over connections of their own, served
// by threads of the worker at once: never may two pass the limit together.
TEST(ServerLimits, ThreadsRacingToAllocateCannotBothPassTheSessionLimit) {
  Limited server({"--max-session-memory", "3M"});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  for (int round = 0; round < 20; ++round) {
    uint64_t made[2] = {};
    cudaError_t result[2];
    std::thread racers[2];
    for (int i = 0; i < 2; ++i) racers[i] = std::thread([&, i] { result[i] = malloc_on(*s, kTwoMiB, &made[i]); });
    for (auto& t : racers) t.join();
    ASSERT_EQ((result[0] == cudaSuccess) + (result[1] == cudaSuccess), 1) << "round " << round;
    for (int i = 0; i < 2; ++i)
      if (result[i] == cudaSuccess) ASSERT_EQ(free_on(*s, made[i]), cudaSuccess);
  }
}

// Staging for graph copies is page-locked memory of the worker's, sized by
// the client: past max-session-host-memory it is refused, and the session
// goes on (device memory is another allowance).
TEST(ServerLimits, MaxSessionHostMemoryRefusesGraphStagingPastIt) {
  Limited server({"--max-session-host-memory", "1M"});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  auto stage = [&](uint64_t bytes) {
    uint64_t base = 0;
    proto::Writer w;
    w.put<uint64_t>(bytes);
    return call_for_handle(*s, proto::kOpGraphStagingAlloc, w, &base);
  };
  EXPECT_EQ(stage(768 << 10), cudaSuccess);
  EXPECT_EQ(stage(512 << 10), cudaErrorMemoryAllocation);
  EXPECT_EQ(stage(17ull << 30), cudaErrorMemoryAllocation);
  EXPECT_EQ(stage(256 << 10), cudaSuccess);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  uint64_t ptr = 0;
  EXPECT_EQ(malloc_on(*s, 4 << 20, &ptr), cudaSuccess);
  // A device reset frees the slabs, and their bytes come back.
  std::vector<uint8_t> reply;
  ASSERT_EQ(s->call(proto::kOpDeviceReset, 0, {}, {}, reply), cudaSuccess);
  EXPECT_EQ(stage(1 << 20), cudaSuccess);
}

// The buffers a pipelined copy streams through (4 slots of at least 4 MiB
// each per connection) count too: a copy's staging leaves less room for
// graph staging, and a copy past the limit is refused, the session going on.
TEST(ServerLimits, MaxSessionHostMemoryCountsCopyStaging) {
  Limited server({"--max-session-host-memory", "20M"});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  uint64_t ptr = 0;
  ASSERT_EQ(malloc_on(*s, 4 << 20, &ptr), cudaSuccess);
  std::vector<uint8_t> data(4 << 20, 1), reply;
  iovec v{data.data(), data.size()};
  auto upload = [&] {
    proto::Writer h2d;
    h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
    return s->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply);
  };
  auto stage = [&](uint64_t bytes) {
    uint64_t base = 0;
    proto::Writer w;
    w.put<uint64_t>(bytes);
    return call_for_handle(*s, proto::kOpGraphStagingAlloc, w, &base);
  };
  ASSERT_EQ(upload(), cudaSuccess);  // 16 MiB of staging held from now on
  EXPECT_EQ(stage(8 << 20), cudaErrorMemoryAllocation);
  ASSERT_EQ(stage(4 << 20), cudaSuccess);
  // Now the copy's slots are held and full: a copy on a second connection
  // (another application thread) finds no room for its own.
  cudaError_t other = cudaSuccess;
  std::thread([&] { other = upload(); }).join();
  EXPECT_EQ(other, cudaErrorMemoryAllocation);
  EXPECT_EQ(upload(), cudaSuccess);  // the first connection's slots serve it again
  EXPECT_EQ(synchronize(*s), cudaSuccess);
}

// Over shm the worker pins the application's page-locked memory: that counts
// too, and unregistering gives it back.
TEST(ServerLimits, MaxSessionHostMemoryBoundsSharedPageLockedMemory) {
  Limited server({"--max-session-host-memory", "1M"});
  auto s = server.session("shm");
  ASSERT_TRUE(s);
  int fd = transport::create_sealed_memfd("rgpu-pinned-test", 768 << 10);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> reply;
  auto reg = [&](uint64_t base) {
    proto::Writer w;
    w.put<uint64_t>(base).put<uint64_t>(768 << 10);
    return s->call_with_fd(proto::kOpHostRegisterShared, 0, w.bytes(), fd, reply);
  };
  const uint64_t a = 0x6e0000000000ull, b = a + (16 << 20);
  ASSERT_EQ(reg(a), cudaSuccess);
  EXPECT_EQ(reg(b), cudaErrorMemoryAllocation);
  EXPECT_EQ(synchronize(*s), cudaSuccess);
  proto::Writer unreg;
  unreg.put<uint64_t>(a);
  ASSERT_EQ(s->call(proto::kOpHostUnregisterShared, 0, unreg.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(reg(b), cudaSuccess);
  close(fd);
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
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(synchronize(*s), cudaErrorDevicesUnavailable);
  auto fresh = server.session("tcp");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(synchronize(*fresh), cudaSuccess);
}

// A 2-D copy's rows are staged whole: rows wider than the worker stages
// (64 MB) are refused before any memory is sized by them.
TEST(ServerLimits, RowsWiderThanTheStagingLimitAreRefused) {
  Limited server({});
  auto s = server.session("tcp");
  ASSERT_TRUE(s);
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
