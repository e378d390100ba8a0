// Bad input against a live rgpu-server (host-memory test backend): each case
// must get an error reply or end only its own session, and the daemon and
// other sessions must keep working.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/copy_3d_wire.hpp"
#include "protocol/descriptor_token.hpp"
#include "protocol/external_wire.hpp"
#include "protocol/frame_io.hpp"
#include "protocol/generated/ops_generated.hpp"
#include "protocol/graph_image.hpp"
#include "protocol/graph_node.hpp"
#include "protocol/handshake.hpp"
#include "protocol/ops.hpp"
#include "protocol/texture_reference_wire.hpp"
#include "protocol/wire_enum.hpp"
#include "test_server.hpp"
#include "transport/transport.hpp"

using namespace rgpu;

namespace {

// The module handle of a kOpModuleLoadImage reply that needed no image.
uint64_t loaded_module(const std::vector<uint8_t>& reply) {
  proto::Reader r(reply);
  EXPECT_EQ(r.get<uint8_t>(), 0);
  return r.get<uint64_t>();
}

// Loads a module of one kernel, k(u64), into a session: the module's handle.
uint64_t load_kernel_module(client::Session& s) {
  char ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
               ".visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n";
  iovec p{ptx, sizeof ptx};
  proto::Writer w;
  w.put_string("").put<uint8_t>(1);
  std::vector<uint8_t> reply;
  EXPECT_EQ(s.call(proto::kOpModuleLoadImage, 0, w.bytes(), {&p, 1}, reply), cudaSuccess);
  return loaded_module(reply);
}

// The transport these tests reach servers by: RGPU_TRANSPORT=ucx runs them
// over ucx (each server then also listens on a ucx port of its own), else
// raw connections use tcp and sessions the automatic choice.
bool over_ucx() {
  const char* t = std::getenv("RGPU_TRANSPORT");
  return t && std::string(t) == "ucx";
}

// The ucx port of the server on each main port.
std::map<uint16_t, uint16_t>& ucx_ports() {
  static std::map<uint16_t, uint16_t> ports;
  return ports;
}

transport::Endpoint server_endpoint(uint16_t port) {
  return {"127.0.0.1", over_ucx() ? ucx_ports().at(port) : port};
}

// A hello asking for GPU 0, as `name`.
proto::Hello hello_for_gpu0(const char* name, uint32_t version = proto::kProtocolVersion) {
  proto::Hello hello;
  hello.protocol_version = version;
  hello.cuda_runtime_version = CUDART_VERSION;
  hello.gpus = {0};
  hello.client_name = name;
  return hello;
}

std::unique_ptr<client::Session> open_session(uint16_t port, const std::vector<int>& gpus, std::string* why) {
  return client::Session::open(server_endpoint(port), over_ucx() ? "ucx" : "", gpus, why);
}

// A connection of the transport under test to `where` (a server's port, or
// a session's join port).
std::unique_ptr<transport::Connection> connect_raw(const transport::Endpoint& where) {
  return (over_ucx() ? transport::make_ucx_transport() : transport::make_tcp_transport())->connect(where, 1000);
}

// rgpu-server as test_server.hpp starts it; over ucx, also on a ucx port of its own.
pid_t start_server(uint16_t port, std::vector<std::string> extra) {
  if (over_ucx()) {
    ucx_ports()[port] = test::free_port();
    extra.insert(extra.end(), {"--ucx-port", std::to_string(ucx_ports()[port])});
  }
  return test::start_server(port, std::move(extra));
}

using test::free_port;
using test::stop_server;

// 4096 bytes of a session's memory and a graph of its, which takes nodes
// as a peer sends them.
struct WireGraph {
  explicit WireGraph(client::Session& s) : session(s) {
    proto::Writer m;
    m.put<uint64_t>(4096);
    EXPECT_EQ(s.call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
    mem = proto::Reader(reply).get<uint64_t>();
    proto::Writer create;
    create.put<uint32_t>(0);
    EXPECT_EQ(s.call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
    graph = proto::Reader(reply).get<uint64_t>();
  }
  int32_t add(const proto::GraphNodeParams& p) {
    proto::Writer w;
    w.put(graph).put<uint32_t>(0);
    proto::put_node(w, p);
    return session.call(proto::kOpGraphAddNode, 0, w.bytes(), {}, reply);
  }
  // `good` as `change` makes it is refused with `error`.
  template <typename Change>
  void expect_refused(proto::GraphNodeParams good, Change change, int32_t error) {
    change(good);
    EXPECT_EQ(add(good), error);
  }
  client::Session& session;
  std::vector<uint8_t> reply;
  uint64_t mem = 0, graph = 0;
};

class ServerFault : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    port_ = free_port();
    pid_ = start_server(port_, {"--workers", "2"});
  }
  static void TearDownTestSuite() { stop_server(pid_); }
  static transport::Endpoint endpoint() { return server_endpoint(port_); }

  static std::unique_ptr<client::Session> session() {
    std::string why;
    auto s = open_session(port_, {0}, &why);
    EXPECT_TRUE(s) << why;
    return s;
  }
  // A raw connection past the server's challenge.
  static std::unique_ptr<transport::Connection> raw() {
    auto c = connect_raw(endpoint());
    auto h = proto::recv_header(*c);
    EXPECT_EQ(h.op, proto::kOpChallenge);
    std::vector<uint8_t> args;
    proto::recv_args(*c, h, args);
    return c;
  }
  // A raw connection that has completed the handshake; the server's answer
  // goes to *reply when asked for.
  static std::unique_ptr<transport::Connection> raw_session(proto::HelloReply* reply = nullptr) {
    auto c = raw();
    proto::Hello hello = hello_for_gpu0("fault-test");
    proto::Writer w;
    hello.encode(w);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, w.bytes());
    auto h = proto::recv_header(*c);
    std::vector<uint8_t> args;
    proto::recv_args(*c, h, args);
    if (reply) {
      proto::Reader r(args);
      *reply = proto::HelloReply::decode(r);
    }
    return c;
  }
  // The same over the Unix socket (shm), where descriptors may travel.
  static std::unique_ptr<transport::Connection> raw_shm_session() {
    auto c = transport::make_shm_transport()->connect({transport::default_shm_socket(port_), 0}, 1000);
    auto ch = proto::recv_header(*c);
    std::vector<uint8_t> args;
    proto::recv_args(*c, ch, args);
    proto::Hello hello = hello_for_gpu0("shm-fault");
    proto::Writer hw;
    hello.encode(hw);
    proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHello}, hw.bytes());
    auto h = proto::recv_header(*c);
    proto::recv_args(*c, h, args);
    return c;
  }
  // Sends one call and returns its status; its outputs go to *out.
  static int32_t call(transport::Connection& c, uint16_t op, const proto::Writer& w,
                      std::vector<uint8_t>* out = nullptr) {
    return test::raw_call(c, op, w, out);
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
    proto::Hello hello = hello_for_gpu0("cut");
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
  proto::Hello hello = hello_for_gpu0("old", proto::kProtocolVersion + 100);
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
  EXPECT_FALSE(open_session(port_, {7}, &why));
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

TEST_F(ServerFault, JoiningNeedsTheSessionSecret) {
  proto::HelloReply reply;
  auto c = raw_session(&reply);
  ASSERT_EQ(reply.status, cudaSuccess);
  ASSERT_NE(reply.join_port, 0);
  ASSERT_EQ(reply.join_secret.size(), 32u);
  auto join = [&](std::vector<uint8_t> secret) {
    auto j = connect_raw({"127.0.0.1", reply.join_port});
    const int32_t status = test::raw_join(*j, std::move(secret)).status;
    return std::pair{status, std::move(j)};
  };
  auto wrong = reply.join_secret;
  wrong[0] ^= 1;
  auto [refused, refused_conn] = join(wrong);
  EXPECT_EQ(refused, cudaErrorNotPermitted);
  EXPECT_TRUE(closed_by_server(*refused_conn));
  // A connection that starts with a call instead of a join is dropped.
  auto rude = connect_raw({"127.0.0.1", reply.join_port});
  proto::send_frame(*rude, proto::FrameHeader{.op = proto::kOpMemGetInfo}, {});
  EXPECT_TRUE(closed_by_server(*rude));
  // The right secret joins: memory allocated on one connection is usable
  // on the other, and both keep working.
  auto [joined, lane] = join(reply.join_secret);
  ASSERT_EQ(joined, cudaSuccess);
  proto::Writer m;
  m.put<uint64_t>(256);
  proto::send_frame(*lane, proto::FrameHeader{.op = proto::kOpMalloc}, m.bytes());
  auto mh = proto::recv_header(*lane);
  std::vector<uint8_t> margs;
  proto::recv_args(*lane, mh, margs);
  proto::Reader mr(margs);
  ASSERT_EQ(mr.get<int32_t>(), cudaSuccess);
  mr.get<int32_t>();
  uint64_t ptr = mr.get<uint64_t>();
  proto::Writer f;
  f.put<uint64_t>(ptr);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpFree}, f.bytes());
  EXPECT_EQ(reply_status(*c), cudaSuccess);
  proto::send_frame(*lane, proto::FrameHeader{.op = proto::kOpFree}, f.bytes());
  EXPECT_EQ(reply_status(*lane), cudaErrorInvalidValue);
  // The session ends with its first connection: joined ones are closed.
  c.reset();
  EXPECT_TRUE(closed_by_server(*lane));
  expect_healthy();
}

// The driver API's module ops: images and module handles are checked, and
// a module belongs to the session that loaded it.
TEST_F(ServerFault, DriverModuleOpsCheckImagesAndHandles) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer with_image;
  with_image.put_string("").put<uint8_t>(1);
  EXPECT_EQ(a->call(proto::kOpModuleLoadImage, 0, with_image.bytes(), {}, reply), cudaErrorInvalidValue);
  // An image the server has not cached is asked for.
  proto::Writer by_hash;
  by_hash.put_string(std::string(64, 'f')).put<uint8_t>(0);
  ASSERT_EQ(a->call(proto::kOpModuleLoadImage, 0, by_hash.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(proto::Reader(reply).get<uint8_t>(), 1);
  char garbage[] = "neither PTX nor a cubin nor a fat binary";
  iovec g{garbage, sizeof garbage};
  EXPECT_EQ(a->call(proto::kOpModuleLoadImage, 0, with_image.bytes(), {&g, 1}, reply), cudaErrorInvalidKernelImage);
  uint64_t module = load_kernel_module(*a);

  proto::Writer unknown;
  unknown.put<uint64_t>(module).put_string("not_there");
  EXPECT_EQ(a->call(proto::kOpModuleGetFunction, 0, unknown.bytes(), {}, reply), cudaErrorInvalidDeviceFunction);
  proto::Writer k;
  k.put<uint64_t>(module).put_string("k");
  EXPECT_EQ(b->call(proto::kOpModuleGetFunction, 0, k.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer bogus;
  bogus.put<uint64_t>(0x1234).put_string("k");
  EXPECT_EQ(a->call(proto::kOpModuleGetFunction, 0, bogus.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  uint8_t truncated[3] = {1, 2, 3};
  EXPECT_EQ(a->call(proto::kOpModuleGetFunction, 0, truncated, {}, reply), cudaErrorInvalidValue);

  ASSERT_EQ(a->call(proto::kOpModuleGetFunction, 0, k.bytes(), {}, reply), cudaSuccess);
  proto::Reader r(reply);
  EXPECT_NE(r.get<uint64_t>(), 0u);
  r.get<int32_t>();
  ASSERT_EQ(r.get<uint32_t>(), 1u);  // one parameter: offset 0, 8 bytes
  EXPECT_EQ(r.get<uint32_t>(), 0u);
  EXPECT_EQ(r.get<uint32_t>(), 8u);
  expect_healthy();
}

// The worker processes the daemon has (idle ones ready and ones serving).
size_t workers_of(pid_t daemon) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string pid, name, state;
    pid_t parent = 0;
    if (stat >> pid >> name >> state >> parent && parent == daemon) ++n;
  }
  return n;
}

// A request numbered far ahead of anything sent can never have its turn:
// it is refused and its session ends, rather than pinning a worker for good
// (the case found by fuzzing, replayed byte for byte).
TEST_F(ServerFault, RequestNumberedTooFarAheadEndsTheSession) {
  auto c = raw_session();
  const unsigned char frame[] = {0x52, 0x47, 0x50, 0x55, 0x00, 0x80, 0xff, 0xff, 0x00, 0x00, 0x00,
                                 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
                                 0x00, 0x00, 0xf6, 0xf9, 0x07, 0xfa, 0xcf, 0x21, 0x10, 0x4a};
  iovec v{const_cast<unsigned char*>(frame), sizeof frame};
  c->send({&v, 1});
  EXPECT_TRUE(closed_by_server(*c));
  expect_healthy();
}

// A request waiting for earlier ones that never come ends when its client
// goes: the worker exits and the daemon is back to its idle workers.
TEST_F(ServerFault, ClientGoneWhileItsRequestWaitsFreesTheWorker) {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const size_t idle = workers_of(pid_);
  for (int i = 0; i < 4; ++i) {
    auto c = raw_session();
    proto::FrameHeader h{.op = proto::kOpDeviceSynchronize, .seq = 1000};
    proto::send_frame(*c, h, {});
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (workers_of(pid_) > idle && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LE(workers_of(pid_), idle);
  expect_healthy();
}

// The Unix socket admits the server's user alone unless configured wider.
TEST_F(ServerFault, UnixSocketIsTheServerUsersOnly) {
  struct stat st{};
  ASSERT_EQ(stat(transport::default_shm_socket(port_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, getuid());
}

// Found by fuzzing the dispatcher: the worker waited for ever for a client
// that had no callback connection to run the callback.
TEST_F(ServerFault, HostFunctionWithoutCallbackConnectionIsRefused) {
  auto c = raw_session();
  proto::Writer w;
  w.put<uint64_t>(0).put<uint64_t>(1);  // the default stream, callback 1
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpLaunchHostFunc}, w.bytes());
  ASSERT_TRUE(c->wait_readable(5000)) << "the worker waits for a callback no client can run";
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidValue);
  expect_healthy();
}

TEST_F(ServerFault, BadMagicEndsTheSession) {
  auto c = raw_session();
  proto::FrameHeader h{0xdeadbeef, proto::kOpMalloc, 0, 0, 0, 0, 0};
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

// A 3-D copy node a peer sends is checked whole: every slice inside the
// session's memory, slices no shorter than the copied rows, rows no wider
// than the pitch, no overflowing numbers; the session goes on after each refusal.
TEST_F(ServerFault, GraphCopyShapesAreChecked) {
  auto a = session();
  WireGraph wire(*a);
  const uint64_t mem = wire.mem;
  // 4 slices of 3 rows of 32 bytes, 64 bytes a row, 5 rows a slice: 1120 bytes from dst.
  proto::GraphNodeParams copy;
  copy.type = cudaGraphNodeTypeMemcpy;
  copy.dst = mem;
  copy.src = mem + 2048;
  copy.width = 32;
  copy.height = 3;
  copy.depth = 4;
  copy.dst_pitch = copy.src_pitch = 64;
  copy.dst_slice = copy.src_slice = 5;
  EXPECT_EQ(wire.add(copy), cudaSuccess);
  auto refused = [&](auto change, int32_t error) { wire.expect_refused(copy, change, error); };
  refused([](auto& p) { p.src_slice = 2; }, cudaErrorInvalidPitchValue);             // slices overlap
  refused([](auto& p) { p.width = 65; }, cudaErrorInvalidPitchValue);                // rows overlap
  refused([](auto& p) { p.depth = 0; }, cudaErrorInvalidValue);
  refused([](auto& p) { p.depth = 7; }, cudaErrorInvalidValue);                      // past the allocation
  refused([](auto& p) { p.dst_slice = uint64_t{1} << 62; }, cudaErrorInvalidPitchValue);  // overflows
  refused([](auto& p) { p.src += 4096; }, cudaErrorInvalidValue);                    // not the session's
  EXPECT_EQ(wire.add(copy), cudaSuccess);
}

// A copy node naming a CUDA array names one of its session's arrays, the
// region inside it on element bounds, never as host memory; two arrays'
// elements are of one size. The session goes on after each refusal.
TEST_F(ServerFault, GraphArrayCopiesAreChecked) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  auto handle = [&] { return proto::Reader(reply).get<uint64_t>(); };
  // 16 x 6 x 4 elements of 4 bytes; b's array, and a's of 2-byte elements.
  auto make_array = [&](client::Session& c, cudaChannelFormatDesc format) {
    proto::Writer w;
    w.put(format).put(cudaExtent{16, 6, 4}).put<uint32_t>(0);
    EXPECT_EQ(c.call(proto::kOpArrayCreate, 0, w.bytes(), {}, reply), cudaSuccess);
    return handle();
  };
  const cudaChannelFormatDesc four{32, 0, 0, 0, cudaChannelFormatKindUnsigned};
  const cudaChannelFormatDesc two{16, 0, 0, 0, cudaChannelFormatKindUnsigned};
  uint64_t array = make_array(*a, four), narrow = make_array(*a, two), others = make_array(*b, four);
  // Handles are each worker's own addresses: two workers may hand out the same
  // one (TSan's allocator did), which is then a's array too, not b's.
  for (int i = 0; i < 8 && (others == array || others == narrow); ++i) others = make_array(*b, four);
  ASSERT_NE(others, array);
  ASSERT_NE(others, narrow);
  WireGraph wire(*a);
  const uint64_t mem = wire.mem;
  // Memory into elements 2-6 of rows 1-3 of slices 1-2.
  proto::GraphNodeParams copy;
  copy.type = cudaGraphNodeTypeMemcpy;
  copy.src = mem;
  copy.src_pitch = 64;
  copy.src_slice = 3;
  copy.dst_array = array;
  copy.dst_at = {8, 1, 1};
  copy.width = 20;
  copy.height = 3;
  copy.depth = 2;
  EXPECT_EQ(wire.add(copy), cudaSuccess);
  auto refused = [&](auto change, int32_t error) { wire.expect_refused(copy, change, error); };
  refused([&](auto& p) { p.dst_array = others; }, cudaErrorInvalidResourceHandle);  // b's
  refused([&](auto& p) { p.dst_array = mem; }, cudaErrorInvalidResourceHandle);     // not an array
  refused([](auto& p) { p.dst_at.x = 48; }, cudaErrorInvalidValue);                 // past the row
  refused([](auto& p) { p.dst_at.y = 4; }, cudaErrorInvalidValue);                  // past the rows
  refused([](auto& p) { p.dst_at.z = 3; }, cudaErrorInvalidValue);                  // past the slices
  refused([](auto& p) { p.dst_at.x = 6; }, cudaErrorInvalidValue);                  // between elements
  refused([](auto& p) { p.width = 22; }, cudaErrorInvalidValue);
  refused([](auto& p) { p.dst_at = {~uint64_t{0} - 3, 0, 0}; }, cudaErrorInvalidValue);  // overflows
  refused([](auto& p) { p.host_sides = proto::kHostDst; }, cudaErrorInvalidValue);
  refused([&](auto& p) { p.src = mem + 4000; }, cudaErrorInvalidValue);  // the memory side past its allocation
  // Array to array: elements of one size.
  proto::GraphNodeParams across = copy;
  across.src_array = array;
  across.src_at = {};
  EXPECT_EQ(wire.add(across), cudaSuccess);
  across.src_array = narrow;
  EXPECT_EQ(wire.add(across), cudaErrorInvalidValue);
  EXPECT_EQ(wire.add(copy), cudaSuccess);
}

// Staging blocks of graph copies (tcp, ucx) are the worker's own memory: a
// copy or host node may name only a range inside one of its session's slabs.
TEST_F(ServerFault, GraphStagingIsCheckedPerSession) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  auto handle = [&] { return proto::Reader(reply).get<uint64_t>(); };
  proto::Writer none, slab;
  none.put<uint64_t>(0);
  EXPECT_EQ(a->call(proto::kOpGraphStagingAlloc, 0, none.bytes(), {}, reply), cudaErrorInvalidValue);
  slab.put<uint64_t>(4096);
  ASSERT_EQ(a->call(proto::kOpGraphStagingAlloc, 0, slab.bytes(), {}, reply), cudaSuccess);
  uint64_t staging = handle();
  proto::Writer m;
  m.put<uint64_t>(4096);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t a_mem = handle();
  ASSERT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t b_mem = handle();
  proto::Writer create;
  create.put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t a_graph = handle();
  ASSERT_EQ(b->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t b_graph = handle();
  auto add_node = [&](client::Session& c, uint64_t graph, const proto::GraphNodeParams& p) {
    proto::Writer w;
    w.put(graph).put<uint32_t>(0);
    proto::put_node(w, p);
    return c.call(proto::kOpGraphAddNode, 0, w.bytes(), {}, reply);
  };
  // An upload from a's block into a's memory; b has no block there.
  proto::GraphNodeParams copy;
  copy.type = cudaGraphNodeTypeMemcpy;
  copy.dst = a_mem;
  copy.src = staging;
  copy.width = copy.dst_pitch = copy.src_pitch = 4096;
  copy.height = 1;
  copy.host_sides = proto::kStagingSrc;
  EXPECT_EQ(add_node(*a, a_graph, copy), cudaSuccess);
  copy.dst = b_mem;
  EXPECT_EQ(add_node(*b, b_graph, copy), cudaErrorInvalidValue);
  // Past the slab's end; a side both shared and staging; a block as device memory.
  copy.dst = a_mem;
  copy.src = staging + 1;
  EXPECT_EQ(add_node(*a, a_graph, copy), cudaErrorInvalidValue);
  copy.src = staging;
  copy.host_sides = proto::kStagingSrc | proto::kHostSrc;
  EXPECT_EQ(add_node(*a, a_graph, copy), cudaErrorInvalidValue);
  copy.host_sides = 0;
  EXPECT_EQ(add_node(*a, a_graph, copy), cudaErrorInvalidValue);
  // A host node filling the block: inside it only, one direction, a's only.
  proto::GraphNodeParams host;
  host.type = cudaGraphNodeTypeHost;
  host.handle = 5;
  host.dst = staging;
  host.width = 4096;
  host.host_sides = proto::kStagingDst;
  EXPECT_EQ(add_node(*a, a_graph, host), cudaSuccess);
  EXPECT_EQ(add_node(*b, b_graph, host), cudaErrorInvalidValue);
  host.width = 4097;
  EXPECT_EQ(add_node(*a, a_graph, host), cudaErrorInvalidValue);
  host.width = 4096;
  host.host_sides = proto::kStagingDst | proto::kStagingSrc;
  EXPECT_EQ(add_node(*a, a_graph, host), cudaErrorInvalidValue);
  host.host_sides = proto::kHostDst;
  EXPECT_EQ(add_node(*a, a_graph, host), cudaErrorInvalidValue);
  // A slab past the session's memory is refused, not a crash.
  proto::Writer huge;
  huge.put<uint64_t>(uint64_t{1} << 62);
  EXPECT_EQ(a->call(proto::kOpGraphStagingAlloc, 0, huge.bytes(), {}, reply), cudaErrorMemoryAllocation);
  // A device reset frees the slabs: nodes naming them are refused from then on.
  ASSERT_EQ(a->call(proto::kOpDeviceReset, 0, {}, {}, reply), cudaSuccess);
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t after_reset = handle();
  host.host_sides = proto::kStagingDst;
  EXPECT_EQ(add_node(*a, after_reset, host), cudaErrorInvalidValue);
  expect_healthy();
}

// A moved session's graphs arrive as images (kOpGraphBuild): every node is
// checked as the graph calls check it, so an image cannot reach another
// session's memory or kernels, nor name nodes it does not hold; a malformed
// image ends only its request; a graph built right runs. Modules preloaded
// for a move (kOpModulePreload) must be real images.
TEST_F(ServerFault, MovedGraphImagesAreCheckedAsGraphCalls) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  const uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  auto fill = [](uint64_t dst, uint32_t value) {
    proto::GraphImageNode n;
    n.params.type = cudaGraphNodeTypeMemset;
    n.params.dst = dst;
    n.params.value = value;
    n.params.element_size = 1;
    n.params.width = n.params.dst_pitch = 256;
    n.params.height = 1;
    return n;
  };
  // Sends an image; the build's outcome (its own status in the reply).
  auto build = [&](client::Session& s, const proto::GraphImage& image, bool exec, uint64_t* made = nullptr,
                   std::string* step = nullptr) -> int32_t {
    proto::Writer w;
    w.put<uint8_t>(exec).put<uint64_t>(0).put<uint64_t>(0);
    proto::put_graph_image(w, image);
    if (int32_t e = s.call(proto::kOpGraphBuild, 0, w.bytes(), {}, reply)) return e;
    proto::Reader r(reply);
    const int32_t status = r.get<int32_t>();
    r.get<uint32_t>();
    r.get<int32_t>();
    const std::string why = r.get_string();
    if (step) *step = why;
    if (!status && made) *made = r.get<uint64_t>();
    return status;
  };
  proto::GraphImage foreign;
  foreign.nodes.push_back(fill(ptr, 1));
  std::string step;
  EXPECT_EQ(build(*b, foreign, false, nullptr, &step), cudaErrorInvalidValue);  // a's memory
  EXPECT_EQ(step, "its parameters");
  proto::GraphImage kernel;
  kernel.nodes.resize(1);
  kernel.nodes[0].params.type = cudaGraphNodeTypeKernel;
  kernel.nodes[0].params.function = 0x42;
  EXPECT_EQ(build(*a, kernel, false), cudaErrorInvalidDeviceFunction);
  proto::GraphImage host;  // a host node naming no callback
  host.nodes.resize(1);
  host.nodes[0].params.type = cudaGraphNodeTypeHost;
  EXPECT_EQ(build(*a, host, false), cudaErrorInvalidValue);
  proto::GraphImage alloc;  // node kinds a source never writes
  alloc.nodes.resize(1);
  alloc.nodes[0].params.type = cudaGraphNodeTypeMemAlloc;
  alloc.nodes[0].params.width = 1 << 20;
  EXPECT_EQ(build(*a, alloc, false), cudaErrorNotSupported);
  proto::GraphImage claims = foreign;  // an executable graph's node standing for one it does not hold
  claims.nodes[0].params.dst = ptr;
  claims.nodes[0].original = 0x1234;
  EXPECT_EQ(build(*a, claims, true), cudaErrorInvalidValue);
  // Malformed: a dependency on a later node, a child graph node without its graph.
  proto::Writer later;
  later.put<uint8_t>(0).put<uint64_t>(0).put<uint64_t>(0).put<uint32_t>(1);
  later.put<uint64_t>(1).put<uint64_t>(0).put<uint32_t>(1).put<uint32_t>(1).put<uint32_t>(0);
  EXPECT_NE(a->call(proto::kOpGraphBuild, 0, later.bytes(), {}, reply), cudaSuccess);

  // Built right, with a child graph and a disabled node: it runs.
  proto::GraphImage good;
  good.nodes.push_back(fill(ptr, 7));
  proto::GraphImageNode child;
  child.params.type = cudaGraphNodeTypeGraph;
  child.child.resize(1);
  child.child[0].nodes.push_back(fill(ptr, 9));
  child.deps = {0};
  good.nodes.push_back(child);
  good.nodes.push_back(fill(ptr, 5));
  good.nodes[2].deps = {1};
  good.nodes[2].enabled = 0;
  uint64_t exec = 0;
  ASSERT_EQ(build(*a, good, true, &exec), cudaSuccess);
  proto::Writer launch;
  launch.put<uint64_t>(exec).put<uint64_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphLaunch, 0, launch.bytes(), {}, reply), cudaSuccess);
  std::vector<uint8_t> back(256);
  proto::Writer d2h;
  d2h.put<uint64_t>(ptr).put<uint64_t>(256).put<uint64_t>(0);
  ASSERT_EQ(a->call_into(proto::kOpMemcpyDtoH, 0, d2h.bytes(), back.data(), back.size(), reply), cudaSuccess);
  EXPECT_EQ(back, std::vector<uint8_t>(256, 9));  // the child graph's fill last: the disabled one did not run
  EXPECT_EQ(b->call(proto::kOpGraphLaunch, 0, launch.bytes(), {}, reply), cudaErrorInvalidValue);

  // A preload with an image that is none is refused; the sessions go on.
  std::vector<uint8_t> junk(64, 0x5a);
  iovec image{junk.data(), junk.size()};
  proto::Writer preload;
  preload.put_string(std::string(64, '0')).put<uint8_t>(1).put<uint32_t>(0);
  EXPECT_NE(a->call(proto::kOpModulePreload, 0, preload.bytes(), {&image, 1}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
}

TEST_F(ServerFault, GraphHandlesAreCheckedPerSession) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  auto handle = [&] { return proto::Reader(reply).get<uint64_t>(); };
  proto::Writer create;
  create.put<uint32_t>(0);
  // The test backend's handles are addresses, and workers forked from one
  // daemon allocate alike: b makes and destroys a graph first, so that its
  // objects lie elsewhere than a's and neither holds the other's numbers.
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t graph = handle();
  // The workers are forks of one process, so their first objects may lie at
  // the same address: b makes a stream first, which takes the address of
  // a's graph, and its graph lies elsewhere.
  proto::Writer stream;
  stream.put<uint32_t>(0).put<int32_t>(0);
  ASSERT_EQ(b->call(proto::kOpStreamCreate, 0, stream.bytes(), {}, reply), cudaSuccess);
  ASSERT_EQ(b->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  proto::Writer shift;
  shift.put(handle());
  ASSERT_EQ(b->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t b_graph = handle();
  ASSERT_EQ(b->call(proto::kOpGraphDestroy, 0, shift.bytes(), {}, reply), cudaSuccess);
  ASSERT_NE(graph, b_graph);

  // An empty node in a's graph.
  proto::GraphNodeParams empty;
  proto::Writer add;
  add.put(graph).put<uint32_t>(0);
  proto::put_node(add, empty);
  ASSERT_EQ(a->call(proto::kOpGraphAddNode, 0, add.bytes(), {}, reply), cudaSuccess);
  uint64_t node = handle();

  // b cannot name a's graph, node or executable graph, nor can anyone bogus ones.
  EXPECT_EQ(b->call(proto::kOpGraphAddNode, 0, add.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer g;
  g.put(graph);
  EXPECT_EQ(b->call(proto::kOpGraphDestroy, 0, g.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer with_foreign_dep;
  with_foreign_dep.put(b_graph).put<uint32_t>(1).put(node);
  proto::put_node(with_foreign_dep, empty);
  EXPECT_EQ(b->call(proto::kOpGraphAddNode, 0, with_foreign_dep.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer n;
  n.put(node);
  EXPECT_EQ(b->call(proto::kOpGraphNodeGetType, 0, n.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer bogus;
  bogus.put<uint64_t>(0x1234);
  EXPECT_EQ(a->call(proto::kOpGraphNodeGetType, 0, bogus.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpGraphGetNodes, 0, bogus.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer inst;
  inst.put(graph).put<uint64_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphInstantiate, 0, inst.bytes(), {}, reply), cudaSuccess);
  uint64_t exec = handle();
  proto::Writer launch;
  launch.put(exec).put<uint64_t>(0);
  EXPECT_EQ(b->call(proto::kOpGraphLaunch, 0, launch.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer bogus_launch;
  bogus_launch.put<uint64_t>(0x9999).put<uint64_t>(0);
  EXPECT_EQ(a->call(proto::kOpGraphLaunch, 0, bogus_launch.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer bad_stream;
  bad_stream.put(exec).put<uint64_t>(0x777);
  EXPECT_EQ(a->call(proto::kOpGraphLaunch, 0, bad_stream.bytes(), {}, reply), cudaErrorInvalidResourceHandle);

  // Node contents: b's memory, past an allocation, a bogus kernel or event.
  // The workers are forks of one process, so their first allocations may lie
  // at the same address: b allocates once more to own an address a does not.
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  ASSERT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t b_mem = handle();
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t a_mem = handle();
  ASSERT_NE(a_mem, b_mem);
  auto add_node = [&](const proto::GraphNodeParams& p) {
    proto::Writer w;
    w.put(graph).put<uint32_t>(0);
    proto::put_node(w, p);
    return a->call(proto::kOpGraphAddNode, 0, w.bytes(), {}, reply);
  };
  proto::GraphNodeParams copy;
  copy.type = cudaGraphNodeTypeMemcpy;
  copy.dst = a_mem;
  copy.src = b_mem;
  copy.width = copy.dst_pitch = copy.src_pitch = 256;
  copy.height = 1;
  EXPECT_EQ(add_node(copy), cudaErrorInvalidValue);
  copy.src = a_mem;
  copy.width = copy.dst_pitch = copy.src_pitch = 257;
  EXPECT_EQ(add_node(copy), cudaErrorInvalidValue);
  copy.width = 64;
  copy.height = 8;
  copy.dst_pitch = copy.src_pitch = 32;  // rows wider than their pitch
  EXPECT_EQ(add_node(copy), cudaErrorInvalidPitchValue);
  proto::GraphNodeParams set;
  set.type = cudaGraphNodeTypeMemset;
  set.dst = a_mem;
  set.element_size = 4;
  set.width = 65;
  set.height = 1;
  EXPECT_EQ(add_node(set), cudaErrorInvalidValue);
  proto::GraphNodeParams kernel;
  kernel.type = cudaGraphNodeTypeKernel;
  kernel.function = 0x42;
  EXPECT_EQ(add_node(kernel), cudaErrorInvalidDeviceFunction);
  proto::GraphNodeParams record;
  record.type = cudaGraphNodeTypeEventRecord;
  record.handle = 0x4242;
  EXPECT_EQ(add_node(record), cudaErrorInvalidResourceHandle);
  proto::GraphNodeParams child;
  child.type = cudaGraphNodeTypeGraph;
  child.handle = b_graph;
  EXPECT_EQ(add_node(child), cudaErrorInvalidValue);
  proto::GraphNodeParams alloc;
  alloc.type = cudaGraphNodeTypeMemAlloc;
  alloc.width = 256;
  alloc.value = 7;  // a GPU the server does not export
  EXPECT_EQ(add_node(alloc), cudaErrorInvalidValue);
  proto::GraphNodeParams free_node;
  free_node.type = cudaGraphNodeTypeMemFree;
  free_node.dst = b_mem;
  EXPECT_EQ(add_node(free_node), cudaErrorInvalidValue);
  // A host side that is no shared memory of a's (nothing is shared over tcp), unknown sides.
  copy.height = 1;
  copy.width = copy.dst_pitch = copy.src_pitch = 64;
  copy.host_sides = proto::kHostSrc;
  EXPECT_EQ(add_node(copy), cudaErrorInvalidValue);
  copy.host_sides = 4;
  EXPECT_EQ(add_node(copy), cudaErrorInvalidValue);
  // Conditional nodes: b's handle, none, bad types and sizes, bodies the client may not name.
  proto::Writer ah;
  ah.put(b_graph).put<uint32_t>(1).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpGraphConditionalHandleCreate, 0, ah.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer bad_flags;
  bad_flags.put(graph).put<uint32_t>(1).put<uint32_t>(0x80);
  EXPECT_EQ(a->call(proto::kOpGraphConditionalHandleCreate, 0, bad_flags.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer own;
  own.put(graph).put<uint32_t>(1).put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphConditionalHandleCreate, 0, own.bytes(), {}, reply), cudaSuccess);
  uint64_t a_handle = handle();
  // One of b's that differs from a's: each worker makes its own, and two
  // workers' allocators may well hand out the same address.
  proto::Writer bh;
  bh.put(b_graph).put<uint32_t>(1).put<uint32_t>(0);
  uint64_t b_handle;
  do {
    ASSERT_EQ(b->call(proto::kOpGraphConditionalHandleCreate, 0, bh.bytes(), {}, reply), cudaSuccess);
    b_handle = handle();
  } while (b_handle == a_handle);
  proto::GraphNodeParams conditional;
  conditional.type = cudaGraphNodeTypeConditional;
  conditional.value = cudaGraphCondTypeIf;
  conditional.width = 1;
  conditional.handle = b_handle;
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);
  conditional.handle = a_handle;
  conditional.width = 0;
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);
  conditional.width = 1u << 20;
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);
  conditional.width = 1;
  conditional.value = 9;
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);
  conditional.value = cudaGraphCondTypeWhile;
  conditional.bodies = {b_graph};
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);
  conditional.bodies.clear();
  conditional.width = 2;  // a WHILE has one body
  EXPECT_EQ(add_node(conditional), cudaErrorInvalidValue);

  // More dependencies than the message holds; captures on bogus streams.
  proto::Writer lying;
  lying.put(graph).put<uint32_t>(1u << 30);
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, lying.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer capture;
  capture.put<uint64_t>(0x31337).put<int32_t>(cudaStreamCaptureModeGlobal);
  EXPECT_EQ(a->call(proto::kOpStreamBeginCapture, 0, capture.bytes(), {}, reply), cudaErrorInvalidResourceHandle);

  // Both sessions still work: a's graph launches, b's is destroyed.
  EXPECT_EQ(a->call(proto::kOpGraphLaunch, 0, launch.bytes(), {}, reply), cudaSuccess);
  proto::Writer bg;
  bg.put(b_graph);
  EXPECT_EQ(b->call(proto::kOpGraphDestroy, 0, bg.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpGraphDestroy, 0, g.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpGraphNodeGetType, 0, n.bytes(), {}, reply), cudaErrorInvalidValue);
  expect_healthy();
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
  pid_t pid = start_server(port, {"--workers", "1"});
  std::string why;
  auto s = open_session(port, {0}, &why);
  ASSERT_TRUE(s) << why;
  stop_server(pid, SIGKILL);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> reply;
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaErrorDevicesUnavailable);
  EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaErrorDevicesUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(ServerFault, SharedMemoryCallsAreChecked) {
  // Over the Unix socket, without the descriptor or outside registered memory.
  auto c = raw_shm_session();
  std::vector<uint8_t> args;
  proto::Writer reg;
  reg.put<uint64_t>(0x10000).put<uint64_t>(4096);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHostRegisterShared}, reg.bytes());
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidValue);
  proto::Writer m;
  m.put<uint64_t>(64);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMalloc}, m.bytes());
  auto mh = proto::recv_header(*c);
  proto::recv_args(*c, mh, args);
  uint64_t dev;
  std::memcpy(&dev, args.data() + sizeof(proto::ReplyPrefix), sizeof dev);
  proto::Writer copy;
  copy.put<uint64_t>(dev).put<uint64_t>(0x10000).put<uint64_t>(64).put<uint8_t>(1).put<uint64_t>(0).put<uint8_t>(1)
      .put<uint8_t>(1);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpMemcpyShared}, copy.bytes());
  EXPECT_EQ(reply_status(*c), cudaErrorInvalidValue);
  proto::Writer unreg;
  unreg.put<uint64_t>(0x10000);
  proto::send_frame(*c, proto::FrameHeader{.op = proto::kOpHostUnregisterShared}, unreg.bytes());
  EXPECT_EQ(reply_status(*c), cudaErrorHostMemoryNotRegistered);
  expect_healthy();
}

TEST(ServerAuth, TokenIsRequiredAndChecked) {
  std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/rgpu-token") << "s3cret-token\n";
  std::ofstream(dir + "/rgpu-wrong") << "not-the-token\n";
  // Secrets are refused unless their owner alone may read them.
  chmod((dir + "/rgpu-token").c_str(), 0600);
  chmod((dir + "/rgpu-wrong").c_str(), 0600);
  uint16_t port = free_port();
  pid_t pid = start_server(port, {"--workers", "1", "--token-file", dir + "/rgpu-token"});
  std::string why;
  unsetenv("RGPU_TOKEN_FILE");
  EXPECT_FALSE(open_session(port, {0}, &why));
  EXPECT_NE(why.find("requires a token"), std::string::npos) << why;
  setenv("RGPU_TOKEN_FILE", (dir + "/rgpu-wrong").c_str(), 1);
  EXPECT_FALSE(open_session(port, {0}, &why));
  EXPECT_NE(why.find("authentication failed"), std::string::npos) << why;
  setenv("RGPU_TOKEN_FILE", (dir + "/rgpu-token").c_str(), 1);
  auto s = open_session(port, {0}, &why);
  EXPECT_TRUE(s) << why;
  std::vector<uint8_t> reply;
  if (s) {
    EXPECT_EQ(s->call(proto::kOpDeviceSynchronize, 0, {}, {}, reply), cudaSuccess);
  }
  unsetenv("RGPU_TOKEN_FILE");
  stop_server(pid);
}

// Launch attributes, cluster occupancy, kernel enumeration, event record
// flags and stream attribute copies: every event, stream, module, function
// and window must be the session's own.
TEST_F(ServerFault, LaunchAttributesAndLibraryOpsCheckHandles) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  uint64_t module = load_kernel_module(*a);
  proto::Writer k;
  k.put<uint64_t>(module).put_string("k");
  ASSERT_EQ(a->call(proto::kOpModuleGetFunction, 0, k.bytes(), {}, reply), cudaSuccess);
  uint64_t function = proto::Reader(reply).get<uint64_t>();
  proto::Writer flags;
  flags.put<uint32_t>(0).put<uint32_t>(1);
  auto made_event = [&](const std::vector<uint8_t>& r) {
    proto::Reader in(r);
    EXPECT_EQ(in.get<uint32_t>(), 1u);
    return in.get<uint64_t>();
  };
  ASSERT_EQ(b->call(proto::kOpEventCreate, 0, flags.bytes(), {}, reply), cudaSuccess);
  uint64_t foreign_event = made_event(reply);
  ASSERT_EQ(a->call(proto::kOpEventCreate, 0, flags.bytes(), {}, reply), cudaSuccess);
  uint64_t own_event = made_event(reply);
  proto::Writer m;
  m.put<uint64_t>(4096);
  ASSERT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t foreign_memory = proto::Reader(reply).get<uint64_t>();

  // Managed variables: of a's modules only; a plain name is none.
  proto::Writer managed;
  managed.put<uint64_t>(module).put_string("k");
  EXPECT_EQ(a->call(proto::kOpModuleGetManaged, 0, managed.bytes(), {}, reply), cudaErrorSymbolNotFound);
  EXPECT_EQ(b->call(proto::kOpModuleGetManaged, 0, managed.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  // Async notifications: a GPU the server exports, a callback number, a's own registrations.
  proto::Writer reg;
  reg.put<int32_t>(7).put<uint64_t>(1);
  EXPECT_EQ(a->call(proto::kOpDeviceRegisterAsyncNotification, 0, reg.bytes(), {}, reply), cudaErrorInvalidDevice);
  proto::Writer reg0;
  reg0.put<int32_t>(0).put<uint64_t>(0);
  EXPECT_EQ(a->call(proto::kOpDeviceRegisterAsyncNotification, 0, reg0.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer reg1;
  reg1.put<int32_t>(0).put<uint64_t>(1);
  ASSERT_EQ(b->call(proto::kOpDeviceRegisterAsyncNotification, 0, reg1.bytes(), {}, reply), cudaSuccess);
  uint64_t b_registration = proto::Reader(reply).get<uint64_t>();
  proto::Writer unreg;
  unreg.put<int32_t>(0).put<uint64_t>(b_registration);
  EXPECT_EQ(a->call(proto::kOpDeviceUnregisterAsyncNotification, 0, unreg.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer unreg_other_device;
  unreg_other_device.put<int32_t>(1).put<uint64_t>(b_registration);
  EXPECT_EQ(b->call(proto::kOpDeviceUnregisterAsyncNotification, 0, unreg_other_device.bytes(), {}, reply),
            cudaErrorInvalidDevice);  // b's session has GPU 0 only
  EXPECT_EQ(b->call(proto::kOpDeviceUnregisterAsyncNotification, 0, unreg.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpDeviceUnregisterAsyncNotification, 0, unreg.bytes(), {}, reply), cudaErrorInvalidValue);

  // One launch of k with the given attributes, answered.
  auto launch = [&](std::vector<cudaLaunchAttribute> attrs, uint32_t count) {
    proto::Writer w;
    w.put<uint64_t>(function).put(dim3(2)).put(dim3(32)).put<uint32_t>(0).put<uint64_t>(0).put<uint32_t>(count);
    for (const auto& at : attrs) w.put<int32_t>(proto::enum_number(at.id)).put(at.val);
    uint64_t arg = 0;
    w.put_bytes(&arg, sizeof arg);
    return a->call(proto::kOpLaunchKernelEx, 0, w.bytes(), {}, reply);
  };
  cudaLaunchAttribute completion{};
  completion.id = cudaLaunchAttributeLaunchCompletionEvent;
  completion.val.launchCompletionEvent.event = reinterpret_cast<cudaEvent_t>(own_event);
  EXPECT_EQ(launch({completion}, 1), cudaSuccess);
  completion.val.launchCompletionEvent.event = reinterpret_cast<cudaEvent_t>(foreign_event);
  EXPECT_EQ(launch({completion}, 1), cudaErrorInvalidResourceHandle);
  cudaLaunchAttribute programmatic{};
  programmatic.id = cudaLaunchAttributeProgrammaticEvent;
  programmatic.val.programmaticEvent.event = reinterpret_cast<cudaEvent_t>(0x1234);
  EXPECT_EQ(launch({programmatic}, 1), cudaErrorInvalidResourceHandle);
  cudaLaunchAttribute window{};
  window.id = cudaLaunchAttributeAccessPolicyWindow;
  window.val.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(foreign_memory);
  window.val.accessPolicyWindow.num_bytes = 4096;
  EXPECT_EQ(launch({window}, 1), cudaErrorInvalidValue);
  cudaLaunchAttribute odd{};
  const int32_t unknown_id = 99;  // names no attribute: as a number, no enum can hold it
  std::memcpy(&odd.id, &unknown_id, sizeof unknown_id);
  EXPECT_EQ(launch({odd}, 1), cudaErrorInvalidValue);
  odd.id = cudaLaunchAttributeDeviceUpdatableKernelNode;
  EXPECT_EQ(launch({odd}, 1), cudaErrorInvalidValue);
  EXPECT_EQ(launch({}, 100000), cudaErrorInvalidValue);
  EXPECT_EQ(launch({}, 2), cudaErrorInvalidValue);  // fewer attributes than announced
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim = {3, 1, 1};
  EXPECT_EQ(launch({cluster}, 1), cudaErrorInvalidValue);  // 3 does not divide the grid of 2
  cluster.val.clusterDim = {2, 1, 1};
  EXPECT_EQ(launch({cluster}, 1), cudaSuccess);

  // Cluster occupancy and shared memory questions name a function of ours.
  proto::Writer occupancy;
  occupancy.put<uint64_t>(0x42).put(dim3(2)).put(dim3(32)).put<uint32_t>(0).put<uint64_t>(0).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpOccupancyMaxActiveClusters, 0, occupancy.bytes(), {}, reply),
            cudaErrorInvalidDeviceFunction);
  proto::Writer smem;
  smem.put<uint64_t>(function).put<int32_t>(1).put<int32_t>(32);
  EXPECT_EQ(b->call(proto::kOpOccupancyAvailableDynamicSMem, 0, smem.bytes(), {}, reply),
            cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(a->call(proto::kOpOccupancyAvailableDynamicSMem, 0, smem.bytes(), {}, reply), cudaSuccess);

  // Enumerating kernels: only of one's own modules.
  proto::Writer enumerate;
  enumerate.put<uint64_t>(module);
  EXPECT_EQ(b->call(proto::kOpModuleEnumerateFunctions, 0, enumerate.bytes(), {}, reply),
            cudaErrorInvalidResourceHandle);
  ASSERT_EQ(a->call(proto::kOpModuleEnumerateFunctions, 0, enumerate.bytes(), {}, reply), cudaSuccess);
  proto::Reader names(reply);
  ASSERT_EQ(names.get<uint32_t>(), 1u);
  EXPECT_EQ(names.get_string(), "k");

  // Event records with flags and attribute copies between streams.
  proto::Writer record;
  record.put<uint64_t>(own_event).put<uint64_t>(0).put<uint32_t>(0x80);
  EXPECT_EQ(a->call(proto::kOpEventRecordWithFlags, 0, record.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer foreign_record;
  foreign_record.put<uint64_t>(foreign_event).put<uint64_t>(0).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpEventRecordWithFlags, 0, foreign_record.bytes(), {}, reply),
            cudaErrorInvalidResourceHandle);
  proto::Writer create_stream;
  create_stream.put<uint32_t>(0).put<int32_t>(0);
  ASSERT_EQ(b->call(proto::kOpStreamCreate, 0, create_stream.bytes(), {}, reply), cudaSuccess);
  uint64_t foreign_stream = proto::Reader(reply).get<uint64_t>();
  proto::Writer copy;
  copy.put<uint64_t>(0).put<uint64_t>(foreign_stream);
  EXPECT_EQ(a->call(proto::kOpStreamCopyAttributes, 0, copy.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer bank;
  bank.put<uint64_t>(function).put<int32_t>(cudaSharedMemBankSizeFourByte);
  EXPECT_EQ(b->call(proto::kOpFuncSetSharedMemConfig, 0, bank.bytes(), {}, reply), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(a->call(proto::kOpFuncSetSharedMemConfig, 0, bank.bytes(), {}, reply), cudaSuccess);

  // Variables a PTX image declares oddly or too large load all the same.
  char odd_ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
                   ".global .align 4 .u32 broken[;\n.global .b8 huge[99999999999][99999999999];\n"
                   ".global .u64 fine[4];\n.visible .entry k(\n)\n{\nret;\n}\n";
  iovec odd_image{odd_ptx, sizeof odd_ptx};
  proto::Writer with_image;
  with_image.put_string("").put<uint8_t>(1);
  ASSERT_EQ(a->call(proto::kOpModuleLoadImage, 0, with_image.bytes(), {&odd_image, 1}, reply), cudaSuccess);
  uint64_t odd_module = loaded_module(reply);
  proto::Writer fine;
  fine.put<uint64_t>(odd_module).put_string("fine");
  ASSERT_EQ(a->call(proto::kOpModuleGetGlobal, 0, fine.bytes(), {}, reply), cudaSuccess);
  proto::Reader global(reply);
  global.get<uint64_t>();
  EXPECT_EQ(global.get<uint64_t>(), 32u);
  proto::Writer huge;
  huge.put<uint64_t>(odd_module).put_string("huge");
  EXPECT_EQ(a->call(proto::kOpModuleGetGlobal, 0, huge.bytes(), {}, reply), cudaSuccess);
  expect_healthy();
}

}  // namespace

TEST_F(ServerFault, ArrayTextureAndSurfaceOpsCheckHandlesAndExtents) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  cudaChannelFormatDesc f{32, 0, 0, 0, cudaChannelFormatKindFloat};
  proto::Writer create;
  create.put(f).put(cudaExtent{16, 4, 0}).put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpArrayCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t array = proto::Reader(reply).get<uint64_t>();
  // Sizes that overflow, formats rgpu does not handle, truncated arguments.
  proto::Writer huge;
  huge.put(f).put(cudaExtent{SIZE_MAX / 2, 4, 1}).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpArrayCreate, 0, huge.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer odd;
  odd.put(cudaChannelFormatDesc{24, 0, 0, 0, cudaChannelFormatKindUnsigned}).put(cudaExtent{4, 4, 0}).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpArrayCreate, 0, odd.bytes(), {}, reply), cudaErrorInvalidChannelDescriptor);
  uint8_t truncated[5] = {};
  EXPECT_EQ(a->call(proto::kOpArrayCreate, 0, truncated, {}, reply), cudaErrorInvalidValue);
  // All arrays together fit the test device's memory (4 GiB), and an array
  // takes memory only as it is written: a second 3 GiB array is refused.
  proto::Writer big;
  big.put(f).put(cudaExtent{16384, 49152, 0}).put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpArrayCreate, 0, big.bytes(), {}, reply), cudaSuccess);
  proto::Writer destroy_big;
  destroy_big.put<uint64_t>(proto::Reader(reply).get<uint64_t>());
  EXPECT_EQ(a->call(proto::kOpArrayCreate, 0, big.bytes(), {}, reply), cudaErrorMemoryAllocation);
  EXPECT_EQ(a->call(proto::kOpArrayDestroy, 0, destroy_big.bytes(), {}, reply), cudaSuccess);

  // Another session cannot name a's array; bogus handles are refused.
  proto::Writer destroy;
  destroy.put<uint64_t>(array);
  EXPECT_EQ(b->call(proto::kOpArrayDestroy, 0, destroy.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer bogus;
  bogus.put<uint64_t>(0x5150);
  EXPECT_EQ(a->call(proto::kOpArrayDestroy, 0, bogus.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(a->call(proto::kOpMipmappedArrayDestroy, 0, bogus.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer level;
  level.put<uint64_t>(0x5150).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpMipmappedArrayGetLevel, 0, level.bytes(), {}, reply), cudaErrorInvalidResourceHandle);

  // 3-D copies: a whole row in, then past the array's width, height and
  // depth, and into b's session: each refused, its payload drained.
  std::vector<uint8_t> data(16 * 4 * 4, 7);
  auto h2d = [&](proto::CopySideWire side, proto::CopyExtentWire x, client::Session& s) {
    proto::Writer w;
    w.put(side).put(x).put<uint64_t>(0).put<uint8_t>(1);
    iovec v{data.data(), x.width * x.height * x.depth};
    return s.call(proto::kOpMemcpy3DHtoD, 0, w.bytes(), {&v, 1}, reply);
  };
  EXPECT_EQ(h2d({array, 0, 0, 0, 0, 3, 0}, {64, 1, 1}, *a), cudaSuccess);
  EXPECT_EQ(h2d({array, 0, 0, 0, 4, 0, 0}, {64, 1, 1}, *a), cudaErrorInvalidValue);
  EXPECT_EQ(h2d({array, 0, 0, 0, 0, 3, 0}, {64, 2, 1}, *a), cudaErrorInvalidValue);
  EXPECT_EQ(h2d({array, 0, 0, 0, 0, 0, 0}, {64, 1, 2}, *a), cudaErrorInvalidValue);
  EXPECT_EQ(h2d({array, 0, 0, 0, 2, 0, 0}, {8, 1, 1}, *a), cudaErrorInvalidValue);  // splits an element
  EXPECT_EQ(h2d({array, 0, 0, 0, 0, 0, 0}, {64, 1, 1}, *b), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(h2d({array, 0, 0, 0, 0, 0, 0}, {0, 1, 1}, *a), cudaErrorInvalidValue);
  // Pitched memory: rows past the allocation, a pitch narrower than a row.
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  EXPECT_EQ(h2d({0, ptr, 64, 4, 0, 0, 0}, {64, 4, 1}, *a), cudaSuccess);
  EXPECT_EQ(h2d({0, ptr, 64, 4, 0, 1, 0}, {64, 4, 1}, *a), cudaErrorInvalidValue);
  EXPECT_EQ(h2d({0, ptr, 32, 4, 0, 0, 0}, {64, 1, 1}, *a), cudaErrorInvalidPitchValue);
  EXPECT_EQ(h2d({0, ptr, 64, 4, 0, 0, 0}, {64, 4, 1}, *b), cudaErrorInvalidValue);
  EXPECT_EQ(h2d({0, ptr, 64, UINT64_MAX / 8, 0, 0, 1}, {64, 1, 1}, *a), cudaErrorInvalidValue);
  proto::Writer d2h;
  d2h.put(proto::CopySideWire{array, 0, 0, 0, 0, 4, 0}).put(proto::CopyExtentWire{64, 1, 1}).put<uint64_t>(0);
  EXPECT_EQ(a->call_into(proto::kOpMemcpy3DDtoH, 0, d2h.bytes(), data.data(), 64, reply), cudaErrorInvalidValue);
  proto::Writer d2d;
  d2d.put(proto::CopySideWire{0, ptr, 64, 4, 0, 0, 0}).put(proto::CopySideWire{0x5150, 0, 0, 0, 0, 0, 0});
  d2d.put(proto::CopyExtentWire{64, 1, 1}).put<uint64_t>(0).put<uint8_t>(1);
  EXPECT_EQ(a->call(proto::kOpMemcpy3DDtoD, 0, d2d.bytes(), {}, reply), cudaErrorInvalidResourceHandle);

  // Texture objects: bogus arrays, memory not the session's or past its end.
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = reinterpret_cast<cudaArray_t>(0x5150);
  cudaTextureDesc tex{};
  auto texture = [&](const cudaResourceDesc& r, client::Session& s) {
    proto::Writer w;
    w.put(r).put(tex).put<uint8_t>(0);
    return s.call(proto::kOpTextureObjectCreate, 0, w.bytes(), {}, reply);
  };
  EXPECT_EQ(texture(res, *a), cudaErrorInvalidResourceHandle);
  res.res.array.array = reinterpret_cast<cudaArray_t>(array);
  EXPECT_EQ(texture(res, *b), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(texture(res, *a), cudaSuccess);
  uint64_t t = proto::Reader(reply).get<uint64_t>();
  cudaResourceDesc lin{};
  lin.resType = cudaResourceTypeLinear;
  lin.res.linear.devPtr = reinterpret_cast<void*>(ptr);
  lin.res.linear.desc = f;
  // A range may run past its allocation, as the driver allows, but not past
  // the end of the address space.
  lin.res.linear.sizeInBytes = ~uint64_t{0} - ptr + 1;
  EXPECT_EQ(texture(lin, *a), cudaErrorInvalidValue);
  lin.res.linear.sizeInBytes = 256;
  EXPECT_EQ(texture(lin, *b), cudaErrorInvalidValue);
  lin.resType = static_cast<cudaResourceType>(9);
  EXPECT_EQ(texture(lin, *a), cudaErrorInvalidValue);
  proto::Writer tdestroy;
  tdestroy.put<uint64_t>(t);
  EXPECT_EQ(b->call(proto::kOpTextureObjectDestroy, 0, tdestroy.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpTextureObjectDestroy, 0, tdestroy.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpTextureObjectDestroy, 0, tdestroy.bytes(), {}, reply), cudaErrorInvalidValue);
  // Surfaces need an array made for them.
  proto::Writer surface;
  surface.put(res);
  EXPECT_EQ(a->call(proto::kOpSurfaceObjectCreate, 0, surface.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpSurfaceObjectDestroy, 0, bogus.bytes(), {}, reply), cudaErrorInvalidValue);

  EXPECT_EQ(a->call(proto::kOpArrayDestroy, 0, destroy.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpArrayDestroy, 0, destroy.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  expect_healthy();
}

TEST_F(ServerFault, TextureReferenceOpsCheckHandlesAndBindings) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  ASSERT_EQ(a->call(proto::kOpTexRefCreate, 0, {}, {}, reply), cudaSuccess);
  uint64_t ref = proto::Reader(reply).get<uint64_t>();
  auto set = [&](client::Session& s, uint64_t r, proto::RefAttr attr, proto::RefValue v) {
    proto::Writer w;
    w.put<uint64_t>(r).put<uint32_t>(static_cast<uint32_t>(attr)).put(v);
    return s.call(proto::kOpReferenceSet, 0, w.bytes(), {}, reply);
  };
  proto::RefValue mode;
  mode.a = 1;
  mode.b = 2;
  EXPECT_EQ(set(*a, ref, proto::RefAttr::address_mode, mode), cudaSuccess);
  // Another session's reference, a bogus one, an unknown property.
  EXPECT_EQ(set(*b, ref, proto::RefAttr::address_mode, mode), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(set(*a, 0x5150, proto::RefAttr::address_mode, mode), cudaErrorInvalidResourceHandle);
  proto::Writer unknown;
  unknown.put<uint64_t>(ref).put<uint32_t>(99).put(mode);
  EXPECT_EQ(a->call(proto::kOpReferenceSet, 0, unknown.bytes(), {}, reply), cudaErrorInvalidValue);
  mode.a = 7;  // no such dimension
  EXPECT_EQ(set(*a, ref, proto::RefAttr::address_mode, mode), cudaErrorInvalidValue);
  // Bindings to memory and arrays that are not the session's.
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(b->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  proto::RefValue address;
  address.handle = proto::Reader(reply).get<uint64_t>();
  address.bytes = 256;
  EXPECT_EQ(set(*a, ref, proto::RefAttr::address, address), cudaErrorInvalidValue);
  EXPECT_EQ(set(*b, ref, proto::RefAttr::address, address), cudaErrorInvalidResourceHandle);
  proto::RefValue array;
  array.handle = 0x5150;
  EXPECT_EQ(set(*a, ref, proto::RefAttr::array, array), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(set(*a, ref, proto::RefAttr::surface_array, array), cudaErrorInvalidResourceHandle);
  proto::RefValue function;
  function.handle = 0x42;
  function.a = -1;
  EXPECT_EQ(set(*a, ref, proto::RefAttr::function_parameter, function), cudaErrorInvalidResourceHandle);
  proto::Writer find;
  find.put<uint64_t>(0x5150).put_string("tex").put<uint8_t>(0);
  EXPECT_EQ(a->call(proto::kOpModuleGetReference, 0, find.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer destroy;
  destroy.put<uint64_t>(ref);
  EXPECT_EQ(b->call(proto::kOpTexRefDestroy, 0, destroy.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(a->call(proto::kOpTexRefDestroy, 0, destroy.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(set(*a, ref, proto::RefAttr::address_mode, mode), cudaErrorInvalidResourceHandle);
}

// Issue 4's sharing ops (IPC, virtual memory management, peers, mapped and
// managed memory) check every handle, range and ordinal before the backend.
TEST_F(ServerFault, IpcHandlesAreCheckedAndOnlyNameThisServersExports) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(8192);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  proto::Writer too_big;
  too_big.put<uint64_t>(ptr).put<uint64_t>(8193);
  EXPECT_EQ(a->call(proto::kOpIpcGetMemHandle, 0, too_big.bytes(), {}, reply), cudaErrorInvalidValue);
  // b's worker cannot export a's memory.
  proto::Writer get;
  get.put<uint64_t>(ptr).put<uint64_t>(8192);
  EXPECT_EQ(b->call(proto::kOpIpcGetMemHandle, 0, get.bytes(), {}, reply), cudaErrorInvalidValue);
  ASSERT_EQ(a->call(proto::kOpIpcGetMemHandle, 0, get.bytes(), {}, reply), cudaSuccess);
  proto::Reader r(reply);
  auto server = r.get<uint64_t>();
  auto token = r.get<std::array<uint8_t, 16>>();

  auto open = [&](uint64_t srv, std::array<uint8_t, 16> tok) {
    proto::Writer w;
    w.put<uint64_t>(srv).put(tok).put<uint32_t>(cudaIpcMemLazyEnablePeerAccess);
    return b->call(proto::kOpIpcOpenMemHandle, 0, w.bytes(), {}, reply);
  };
  auto wrong_token = token;
  wrong_token[3] ^= 1;
  EXPECT_EQ(open(server, wrong_token), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(open(server ^ 1, token), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(open(server, token), cudaSuccess);
  uint64_t opened = proto::Reader(reply).get<uint64_t>();
  // Opened memory is b's to copy into, and to close once.
  std::vector<uint8_t> data(16, 7);
  iovec v{data.data(), data.size()};
  proto::Writer h2d;
  h2d.put<uint64_t>(opened).put<uint64_t>(0).put<uint8_t>(1);
  EXPECT_EQ(b->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply), cudaSuccess);
  proto::Writer close;
  close.put<uint64_t>(opened);
  EXPECT_EQ(a->call(proto::kOpIpcCloseMemHandle, 0, close.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(b->call(proto::kOpIpcCloseMemHandle, 0, close.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpIpcCloseMemHandle, 0, close.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(b->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply), cudaErrorInvalidValue);
  // An event handle is not a memory handle, and events must be the session's.
  proto::Writer event;
  event.put<uint64_t>(0x4444);
  EXPECT_EQ(a->call(proto::kOpIpcGetEventHandle, 0, event.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer as_event;
  as_event.put<uint64_t>(server).put(token);
  EXPECT_EQ(b->call(proto::kOpIpcOpenEventHandle, 0, as_event.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  uint8_t truncated[5] = {1, 2, 3, 4, 5};
  EXPECT_EQ(b->call(proto::kOpIpcOpenMemHandle, 0, truncated, {}, reply), cudaErrorInvalidValue);
  proto::Writer f;
  f.put<uint64_t>(ptr);
  EXPECT_EQ(a->call(proto::kOpFree, 0, f.bytes(), {}, reply), cudaSuccess);
  expect_healthy();
}

TEST_F(ServerFault, VirtualMemoryOpsCheckHandlesRangesAndDevices) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.win32HandleMetaData = reinterpret_cast<void*>(0x1234);  // a client's pointer: ignored
  const uint64_t g = 2 << 20;
  proto::Writer create;
  create.put<uint64_t>(g).put(prop);
  ASSERT_EQ(a->call(proto::kOpVmmCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t handle = proto::Reader(reply).get<uint64_t>();
  CUmemAllocationProp elsewhere = prop;
  elsewhere.location.id = 1;  // not a GPU of this session
  proto::Writer create_elsewhere;
  create_elsewhere.put<uint64_t>(g).put(elsewhere);
  EXPECT_EQ(a->call(proto::kOpVmmCreate, 0, create_elsewhere.bytes(), {}, reply), cudaErrorInvalidDevice);

  proto::Writer reserve;
  reserve.put<uint64_t>(2 * g).put<uint64_t>(0);
  ASSERT_EQ(a->call(proto::kOpVmmReserve, 0, reserve.bytes(), {}, reply), cudaSuccess);
  uint64_t base = proto::Reader(reply).get<uint64_t>();
  auto map = [&](client::Session& s, uint64_t at, uint64_t size, uint64_t offset, uint64_t h) {
    proto::Writer w;
    w.put<uint64_t>(at).put<uint64_t>(size).put<uint64_t>(offset).put<uint64_t>(h);
    return s.call(proto::kOpVmmMap, 0, w.bytes(), {}, reply);
  };
  EXPECT_EQ(map(*b, base, g, 0, handle), cudaErrorInvalidValue);      // not b's handle or range
  EXPECT_EQ(map(*a, base, g, 0, 0x999), cudaErrorInvalidValue);       // no such allocation
  EXPECT_EQ(map(*a, base + g, 2 * g, 0, handle), cudaErrorInvalidValue);  // past the reservation
  EXPECT_EQ(map(*a, base, g, g, handle), cudaErrorInvalidValue);      // past the allocation
  EXPECT_EQ(map(*a, 0x10000, g, 0, handle), cudaErrorInvalidValue);   // not reserved
  auto access = [&](client::Session& s, uint64_t at, uint64_t size, int device) {
    proto::Writer w;
    w.put<uint64_t>(at).put<uint64_t>(size).put<int32_t>(device).put<int32_t>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    return s.call(proto::kOpVmmSetAccess, 0, w.bytes(), {}, reply);
  };
  EXPECT_EQ(access(*a, base, g, 0), cudaErrorInvalidValue);  // nothing mapped yet
  ASSERT_EQ(map(*a, base, g, 0, handle), cudaSuccess);
  EXPECT_EQ(map(*a, base, g, 0, handle), cudaErrorInvalidValue);  // mapped already
  EXPECT_EQ(access(*a, base, g, 5), cudaErrorInvalidDevice);
  EXPECT_EQ(access(*b, base, g, 0), cudaErrorInvalidValue);
  ASSERT_EQ(access(*a, base, g, 0), cudaSuccess);
  proto::Writer set;
  set.put<uint64_t>(base).put<int32_t>(1).put<uint64_t>(g).put<uint64_t>(0);
  EXPECT_EQ(b->call(proto::kOpMemset, 0, set.bytes(), {}, reply), cudaErrorInvalidValue);  // a's memory
  EXPECT_EQ(a->call(proto::kOpMemset, 0, set.bytes(), {}, reply), cudaSuccess);
  proto::Writer free_range;
  free_range.put<uint64_t>(base).put<uint64_t>(2 * g);
  EXPECT_EQ(a->call(proto::kOpVmmFree, 0, free_range.bytes(), {}, reply), cudaErrorInvalidValue);  // still mapped
  proto::Writer unmap;
  unmap.put<uint64_t>(base).put<uint64_t>(g);
  EXPECT_EQ(b->call(proto::kOpVmmUnmap, 0, unmap.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpVmmUnmap, 0, unmap.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpVmmFree, 0, free_range.bytes(), {}, reply), cudaSuccess);
  proto::Writer release;
  release.put<uint64_t>(handle);
  EXPECT_EQ(b->call(proto::kOpVmmRelease, 0, release.bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpVmmRelease, 0, release.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(a->call(proto::kOpVmmRelease, 0, release.bytes(), {}, reply), cudaErrorInvalidValue);
  expect_healthy();
}

// Enum arguments and enum fields of structs off the wire hold any number an
// application (or a forged frame) puts there; the worker reads them as
// numbers (protocol/wire_enum.hpp) and answers those no enumerator names as
// CUDA does, and the session goes on. A number past every CUDA enum's range:
constexpr uint32_t kNoEnumerator = 0x80000000;

TEST_F(ServerFault, OutOfRangeEnumFieldsAreRefusedAndTheSessionGoesOn) {
  std::string why;
  auto a = open_session(port_, {0, 1}, &why);
  ASSERT_TRUE(a) << why;
  std::vector<uint8_t> reply;
  auto call = [&](uint16_t op, const proto::Writer& w) { return a->call(op, 0, w.bytes(), {}, reply); };

  // Memory pools: properties and access flags.
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  auto create_pool = [&](const cudaMemPoolProps& p) {
    proto::Writer w;
    w.put(p);
    return call(proto::kOpMemPoolCreate, w);
  };
  cudaMemPoolProps odd = props;
  proto::set_enum_number(&odd.allocType, kNoEnumerator);
  EXPECT_EQ(create_pool(odd), cudaErrorInvalidValue);
  odd = props;
  proto::set_enum_number(&odd.location.type, kNoEnumerator);
  EXPECT_EQ(create_pool(odd), cudaErrorInvalidValue);
  odd = props;
  proto::set_enum_number(&odd.handleTypes, 0x40u);
  EXPECT_EQ(create_pool(odd), cudaErrorNotSupported);
  ASSERT_EQ(create_pool(props), cudaSuccess);
  uint64_t pool = proto::Reader(reply).get<uint64_t>();
  auto pool_access = [&](uint32_t flags) {
    proto::Writer w;
    w.put(pool).put<int32_t>(0).put(flags);
    return call(proto::kOpMemPoolSetAccess, w);
  };
  EXPECT_EQ(pool_access(2), cudaErrorInvalidValue);  // between enumerators
  EXPECT_EQ(pool_access(kNoEnumerator), cudaErrorInvalidValue);
  EXPECT_EQ(pool_access(cudaMemAccessFlagsProtReadWrite), cudaSuccess);

  // Virtual memory: allocation properties, granularity options, access flags.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  auto granularity = [&](const CUmemAllocationProp& p, uint32_t option) {
    proto::Writer w;
    w.put(p).put(option);
    return call(proto::kOpVmmGranularity, w);
  };
  CUmemAllocationProp odd_prop = prop;
  proto::set_enum_number(&odd_prop.type, kNoEnumerator);
  EXPECT_EQ(granularity(odd_prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), cudaErrorInvalidValue);
  odd_prop = prop;
  proto::set_enum_number(&odd_prop.location.type, kNoEnumerator);
  EXPECT_EQ(granularity(odd_prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), cudaErrorInvalidDevice);
  EXPECT_EQ(granularity(prop, 7), cudaErrorInvalidValue);
  ASSERT_EQ(granularity(prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), cudaSuccess);
  const uint64_t g = proto::Reader(reply).get<uint64_t>();
  odd_prop = prop;
  proto::set_enum_number(&odd_prop.requestedHandleTypes, kNoEnumerator);
  proto::Writer create_odd;
  create_odd.put(g).put(odd_prop);
  EXPECT_EQ(call(proto::kOpVmmCreate, create_odd), cudaErrorInvalidValue);
  proto::Writer reserve;
  reserve.put(g).put<uint64_t>(0);
  ASSERT_EQ(call(proto::kOpVmmReserve, reserve), cudaSuccess);
  uint64_t base = proto::Reader(reply).get<uint64_t>();
  proto::Writer access;
  access.put(base).put(g).put<int32_t>(0).put(kNoEnumerator);
  EXPECT_EQ(call(proto::kOpVmmSetAccess, access), cudaErrorInvalidValue);

  // A kernel's attributes, cache and shared memory configurations.
  proto::Writer get_function;
  get_function.put(load_kernel_module(*a)).put_string("k");
  ASSERT_EQ(call(proto::kOpModuleGetFunction, get_function), cudaSuccess);
  uint64_t function = proto::Reader(reply).get<uint64_t>();
  auto on_function = [&](uint16_t op, uint32_t number, std::optional<int32_t> value = {}) {
    proto::Writer w;
    w.put(function).put(number);
    if (value) w.put(*value);
    return call(op, w);
  };
  EXPECT_EQ(on_function(proto::kOpFuncSetAttribute, 3, 0), cudaErrorInvalidValue);  // below the first
  EXPECT_EQ(on_function(proto::kOpFuncSetAttribute, kNoEnumerator, 0), cudaErrorInvalidValue);
  EXPECT_EQ(on_function(proto::kOpFuncSetAttribute, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024), cudaSuccess);
  EXPECT_EQ(on_function(proto::kOpFuncSetCacheConfig, kNoEnumerator), cudaErrorInvalidValue);
  EXPECT_EQ(on_function(proto::kOpFuncSetCacheConfig, cudaFuncCachePreferL1), cudaSuccess);
  EXPECT_EQ(on_function(proto::kOpFuncSetSharedMemConfig, kNoEnumerator), cudaErrorInvalidValue);
  EXPECT_EQ(on_function(proto::kOpFuncSetSharedMemConfig, cudaSharedMemBankSizeEightByte), cudaSuccess);

  // Peer attributes.
  auto p2p = [&](uint32_t attr) {
    proto::Writer w;
    w.put(attr).put<int32_t>(0).put<int32_t>(1);
    return call(proto::kOpDeviceGetP2PAttribute, w);
  };
  EXPECT_EQ(p2p(0), cudaErrorInvalidValue);
  EXPECT_EQ(p2p(kNoEnumerator), cudaErrorInvalidValue);
  EXPECT_EQ(p2p(cudaDevP2PAttrAccessSupported), cudaSuccess);

  // Stream attributes and capture modes.
  proto::Writer stream_attribute;
  stream_attribute.put<uint64_t>(0).put(kNoEnumerator).put(cudaLaunchAttributeValue{});
  EXPECT_EQ(call(proto::kOpStreamSetAttribute, stream_attribute), cudaErrorInvalidValue);
  proto::Writer mode;
  mode.put(kNoEnumerator);
  EXPECT_EQ(call(proto::kOpThreadExchangeStreamCaptureMode, mode), cudaErrorInvalidValue);

  // Arrays and textures: a channel kind and a filter mode no enumerator names.
  cudaChannelFormatDesc f{32, 0, 0, 0, cudaChannelFormatKindFloat};
  proto::set_enum_number(&f.f, kNoEnumerator);
  proto::Writer odd_array;
  odd_array.put(f).put(cudaExtent{16, 4, 0}).put<uint32_t>(0);
  EXPECT_EQ(call(proto::kOpArrayCreate, odd_array), cudaErrorInvalidChannelDescriptor);
  f.f = cudaChannelFormatKindFloat;
  proto::Writer array_create;
  array_create.put(f).put(cudaExtent{16, 4, 0}).put<uint32_t>(0);
  ASSERT_EQ(call(proto::kOpArrayCreate, array_create), cudaSuccess);
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = reinterpret_cast<cudaArray_t>(proto::Reader(reply).get<uint64_t>());
  cudaTextureDesc tex{};
  proto::set_enum_number(&tex.filterMode, kNoEnumerator);
  proto::Writer texture;
  texture.put(res).put(tex).put<uint8_t>(0);
  EXPECT_EQ(call(proto::kOpTextureObjectCreate, texture), cudaErrorInvalidValue);

  // A decompression's algorithm goes to the driver as the application's
  // number (the test backend answers every batch as unsupported).
  proto::Writer m;
  m.put<uint64_t>(8192);
  ASSERT_EQ(call(proto::kOpMalloc, m), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  proto::Writer decompress;
  decompress.put<uint64_t>(0).put<uint32_t>(0).put<uint32_t>(1);
  decompress.put<uint64_t>(512).put<uint64_t>(1024).put(ptr + 4000).put(ptr).put(ptr + 1024).put(kNoEnumerator);
  ASSERT_EQ(call(proto::kOpMemBatchDecompress, decompress), cudaSuccess);
  EXPECT_EQ(proto::Reader(reply).get<int32_t>(), cudaErrorNotSupported);

  // The same session still works.
  proto::Writer set;
  set.put(ptr).put<int32_t>(1).put<uint64_t>(8192).put<uint64_t>(0);
  EXPECT_EQ(call(proto::kOpMemset, set), cudaSuccess);
  expect_healthy();
}

// Shareable handles: the worker checks the transport itself (a client may
// skip its own check), the descriptor an import names, and its handles.
TEST_F(ServerFault, ShareableHandleOpsCheckTransportDescriptorsAndHandles) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  proto::Writer create;
  create.put<uint64_t>(2 << 20).put(prop);
  auto export_as = [](uint64_t handle, int32_t type) {
    proto::Writer w;
    w.put<uint64_t>(handle).put<int32_t>(type);
    return w;
  };
  proto::Writer import_fd;
  import_fd.put<int32_t>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).put(proto::DescriptorCarrier::attached);
  std::vector<uint8_t> out;

  // tcp: no descriptor crosses, whatever the client asks: an export is a
  // token (descriptor_handle_test.cpp), an import of an attached one
  // finds none.
  auto tcp = raw_session();
  ASSERT_EQ(call(*tcp, proto::kOpVmmCreate, create, &out), cudaSuccess);
  uint64_t tcp_handle = proto::Reader(out).get<uint64_t>();
  ASSERT_EQ(call(*tcp, proto::kOpVmmExport, export_as(tcp_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), &out),
            cudaSuccess);
  EXPECT_EQ(proto::Reader(out).get<proto::DescriptorToken>().kind, proto::DescriptorKind::memory);
  EXPECT_EQ(call(*tcp, proto::kOpVmmImport, import_fd), cudaErrorInvalidValue);
  proto::Writer malloc_args;
  malloc_args.put<uint64_t>(1 << 16);
  ASSERT_EQ(call(*tcp, proto::kOpMalloc, malloc_args, &out), cudaSuccess);
  uint64_t dev = proto::Reader(out).get<uint64_t>();
  proto::Writer range;
  range.put<uint64_t>(dev).put<uint64_t>(1 << 16).put<int32_t>(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD).put<uint64_t>(0);
  EXPECT_EQ(call(*tcp, proto::kOpMemGetHandleForAddressRange, range), cudaErrorNotSupported);

  // shm: a descriptor comes with the reply; imports need one, of memory.
  auto shm = raw_shm_session();
  ASSERT_EQ(call(*shm, proto::kOpVmmCreate, create, &out), cudaSuccess);
  uint64_t handle = proto::Reader(out).get<uint64_t>();
  // A handle this session never made. Another session's may be the same
  // value: each worker hands out its own, and workers forked from one
  // daemon state can make them at the same addresses.
  const uint64_t not_made_here = tcp_handle != handle ? tcp_handle : handle + 64;
  EXPECT_EQ(call(*shm, proto::kOpVmmExport, export_as(not_made_here, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)),
            cudaErrorInvalidValue);
  EXPECT_EQ(call(*shm, proto::kOpVmmExport, export_as(handle, CU_MEM_HANDLE_TYPE_NONE)), cudaErrorInvalidValue);
  EXPECT_EQ(shm->take_fd(), -1);
  ASSERT_EQ(call(*shm, proto::kOpVmmExport, export_as(handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)), cudaSuccess);
  int fd = shm->take_fd();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(call(*shm, proto::kOpVmmImport, import_fd), cudaErrorInvalidValue);  // no descriptor sent
  proto::FrameHeader h{.op = proto::kOpVmmImport, .args_len = static_cast<uint32_t>(import_fd.size())};
  iovec parts[2] = {{&h, sizeof h}, {const_cast<uint8_t*>(import_fd.bytes().data()), import_fd.size()}};
  int null_fd = open("/dev/null", O_RDONLY);
  shm->send_with_fd(parts, null_fd);  // not memory
  EXPECT_EQ(reply_status(*shm), cudaErrorInvalidValue);
  close(null_fd);
  shm->send_with_fd(parts, fd);
  ASSERT_EQ(reply_status(*shm), cudaSuccess);
  close(fd);
  proto::Writer garbage_import;
  garbage_import.put<int32_t>(12345);
  EXPECT_EQ(call(*shm, proto::kOpVmmImport, garbage_import), cudaErrorInvalidValue);

  // Pools and pool pointers: only the session's own.
  proto::Writer pool_export;
  pool_export.put<uint64_t>(0x1234).put<int32_t>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).put<uint64_t>(0);
  EXPECT_EQ(call(*shm, proto::kOpMemPoolExport, pool_export), cudaErrorInvalidResourceHandle);
  proto::Writer import_pointer;
  import_pointer.put<uint64_t>(0x1234).put(CUmemPoolPtrExportData{});
  EXPECT_EQ(call(*shm, proto::kOpMemPoolImportPointer, import_pointer), cudaErrorInvalidResourceHandle);
  proto::Writer export_pointer;
  export_pointer.put<uint64_t>(dev);  // the tcp session's memory
  EXPECT_EQ(call(*shm, proto::kOpMemPoolExportPointer, export_pointer), cudaErrorInvalidValue);
  EXPECT_EQ(call(*shm, proto::kOpMemGetHandleForAddressRange, range), cudaErrorInvalidValue);
}

// External memory and semaphores: imports need the descriptor that comes
// with the frame (none can over tcp), later calls name only the session's
// objects, and a batch of operations has a bounded size.
TEST_F(ServerFault, ExternalMemoryAndSemaphoreOpsCheckTheirArguments) {
  auto a = session();
  std::vector<uint8_t> reply;
  proto::Writer import_memory;
  import_memory.put<int32_t>(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD).put<uint64_t>(4096).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpExternalMemoryImport, 0, import_memory.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer import_semaphore;
  import_semaphore.put<int32_t>(CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpExternalSemaphoreImport, 0, import_semaphore.bytes(), {}, reply),
            cudaErrorInvalidValue);
  proto::Writer map;
  map.put<uint64_t>(0x1234).put<uint64_t>(0).put<uint64_t>(64).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpExternalMemoryMapBuffer, 0, map.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer mipmap;
  mipmap.put<uint64_t>(0x1234).put<uint64_t>(0).put(cudaChannelFormatDesc{8, 0, 0, 0, cudaChannelFormatKindUnsigned});
  mipmap.put(cudaExtent{16, 16, 0}).put<uint32_t>(0).put<uint32_t>(1);
  EXPECT_EQ(a->call(proto::kOpExternalMemoryMapMipmap, 0, mipmap.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer destroy;
  destroy.put<uint64_t>(0x1234);
  EXPECT_EQ(a->call(proto::kOpExternalMemoryDestroy, 0, destroy.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(a->call(proto::kOpExternalSemaphoreDestroy, 0, destroy.bytes(), {}, reply),
            cudaErrorInvalidResourceHandle);
  proto::Writer signal;
  signal.put<uint64_t>(0);
  proto::put_semaphore_ops(signal, {proto::ExternalSemaphoreOp{0x1234, 1, 0, 0, 0}});
  EXPECT_EQ(a->call(proto::kOpExternalSemaphoresSignal, 0, signal.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(a->call(proto::kOpExternalSemaphoresWait, 0, signal.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer too_many;
  too_many.put<uint64_t>(0).put<uint32_t>(proto::kMaxExternalSemaphoreOps + 1);
  EXPECT_EQ(a->call(proto::kOpExternalSemaphoresWait, 0, too_many.bytes(), {}, reply), cudaErrorInvalidValue);
  // A graph node naming a semaphore the session never imported.
  proto::Writer graph_create;
  graph_create.put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, graph_create.bytes(), {}, reply), cudaSuccess);
  uint64_t graph = proto::Reader(reply).get<uint64_t>();
  proto::GraphNodeParams node;
  node.type = cudaGraphNodeTypeExtSemaphoreSignal;
  node.semaphores = {proto::ExternalSemaphoreOp{0x1234, 1, 0, 0, 0}};
  proto::Writer add;
  add.put<uint64_t>(graph).put<uint32_t>(0);
  proto::put_node(add, node);
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  expect_healthy();
}

TEST_F(ServerFault, PeerMappedAndManagedOpsCheckTheirArguments) {
  auto a = session();
  std::vector<uint8_t> reply;
  proto::Writer peer;
  peer.put<int32_t>(0).put<int32_t>(1);  // GPU 1 is not this session's
  EXPECT_EQ(a->call(proto::kOpDeviceCanAccessPeer, 0, peer.bytes(), {}, reply), cudaErrorInvalidDevice);
  proto::Writer enable;
  enable.put<int32_t>(9).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpDeviceEnablePeerAccess, 0, enable.bytes(), {}, reply), cudaErrorInvalidDevice);
  uint8_t odd[3] = {1, 2, 3};
  proto::Writer atomics;
  atomics.put_bytes(odd, sizeof odd).put<int32_t>(0);
  EXPECT_EQ(a->call(proto::kOpDeviceGetHostAtomicCapabilities, 0, atomics.bytes(), {}, reply),
            cudaErrorInvalidValue);
  std::vector<uint8_t> many(4 * 1000);
  proto::Writer too_many;
  too_many.put_bytes(many.data(), many.size()).put<int32_t>(0);
  EXPECT_EQ(a->call(proto::kOpDeviceGetHostAtomicCapabilities, 0, too_many.bytes(), {}, reply),
            cudaErrorInvalidValue);
  // An empty list of operations has no capabilities to answer (it copied
  // into no buffer at all: undefined behaviour, found by UBSan).
  proto::Writer none;
  none.put_bytes(nullptr, 0).put<int32_t>(0);
  EXPECT_EQ(a->call(proto::kOpDeviceGetHostAtomicCapabilities, 0, none.bytes(), {}, reply), cudaSuccess);
  proto::Reader no_caps(reply);
  EXPECT_TRUE(no_caps.get_bytes().empty());
  proto::Writer host;
  host.put<uint64_t>(0x7000);  // no shared memory there
  EXPECT_EQ(a->call(proto::kOpHostGetDevicePointer, 0, host.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer managed;
  managed.put<uint64_t>(0x200000000000ull).put<uint64_t>(4096);  // over tcp: no descriptor
  EXPECT_EQ(a->call(proto::kOpManagedMap, 0, managed.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer unmanaged;
  unmanaged.put<uint64_t>(0x200000000000ull);
  EXPECT_EQ(a->call(proto::kOpManagedUnmap, 0, unmanaged.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer pool_access;
  pool_access.put<uint64_t>(0x5555).put<int32_t>(0).put<int32_t>(cudaMemAccessFlagsProtReadWrite);
  EXPECT_EQ(a->call(proto::kOpMemPoolSetAccess, 0, pool_access.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  expect_healthy();
}

// Driver ops: stream memory operations may only name the session's own
// device memory, aligned; links need their whole payload; forwarded driver
// calls check function, module and event handles.
TEST_F(ServerFault, DriverMemOpsLinksAndHandlesAreChecked) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(256);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  auto mem_op = [](uint64_t stream, uint32_t type, uint64_t address) {
    proto::Writer w;
    w.put<uint64_t>(stream).put<uint32_t>(0).put<uint32_t>(1);
    w.put<uint32_t>(type).put<uint32_t>(0).put<uint64_t>(address).put<uint64_t>(5);
    return w;
  };
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0, CU_STREAM_MEM_OP_WRITE_VALUE_32, ptr).bytes(), {}, reply),
            cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpStreamMemOps, 0, mem_op(0, CU_STREAM_MEM_OP_WRITE_VALUE_32, ptr).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0, CU_STREAM_MEM_OP_WRITE_VALUE_64, ptr + 252).bytes(), {},
                    reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0, CU_STREAM_MEM_OP_WAIT_VALUE_32, ptr + 2).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0, 77, ptr).bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0, CU_STREAM_MEM_OP_BARRIER, ptr).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, mem_op(0x1234567, CU_STREAM_MEM_OP_WRITE_VALUE_32, ptr).bytes(), {},
                    reply),
            cudaErrorInvalidResourceHandle);
  proto::Writer none;
  none.put<uint64_t>(0).put<uint32_t>(0).put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpStreamMemOps, 0, none.bytes(), {}, reply), cudaErrorInvalidValue);

  // A link whose inputs say more bytes than the payload holds, and one with none.
  char ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
  iovec p{ptx, sizeof ptx};
  proto::Writer link;
  link.put<uint32_t>(1).put<int32_t>(CU_JIT_INPUT_PTX).put_string("k.ptx").put<uint64_t>(sizeof ptx + 10);
  EXPECT_EQ(a->call(proto::kOpLink, 0, link.bytes(), {&p, 1}, reply), cudaErrorInvalidValue);
  proto::Writer empty;
  empty.put<uint32_t>(0);
  EXPECT_EQ(a->call(proto::kOpLink, 0, empty.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer good;
  good.put<uint32_t>(1).put<int32_t>(CU_JIT_INPUT_PTX).put_string("k.ptx").put<uint64_t>(sizeof ptx);
  EXPECT_EQ(a->call(proto::kOpLink, 0, good.bytes(), {&p, 1}, reply), cudaSuccess);

  // Forwarded driver calls with handles this session never had.
  proto::Writer mod;
  mod.put<uint64_t>(0x42);
  EXPECT_EQ(a->call(proto::kOp_cuCtxRecordEvent, 0, mod.bytes(), {}, reply), cudaErrorInvalidResourceHandle);
  proto::Writer dev;
  dev.put(CU_EXEC_AFFINITY_TYPE_SM_COUNT).put<int32_t>(7);
  EXPECT_EQ(a->call(proto::kOp_cuDeviceGetExecAffinitySupport, 0, dev.bytes(), {}, reply), cudaErrorInvalidDevice);
  expect_healthy();
}

// The generator's data kinds: device addresses must be the session's,
// arrays must hold what their length parameter says (and no more than the
// most), fixed-size values their size, buffers their declared size within
// the limit; multicast and allocation handles must be the session's.
TEST_F(ServerFault, GeneratedDataKindsAreChecked) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(4096);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  auto tiled = [&](uint32_t rank, uint64_t address, uint32_t dims_given) {
    proto::Writer w;
    std::vector<cuuint64_t> dims(dims_given, 64), strides(rank > 1 ? rank - 1 : 0, 256);
    std::vector<cuuint32_t> box(rank, 16), ones(rank, 1);
    w.put(CU_TENSOR_MAP_DATA_TYPE_FLOAT32).put<cuuint32_t>(rank).put<uint64_t>(address);
    // Each array: whether it was given, then its elements.
    w.put<uint8_t>(1).put_bytes(dims.data(), dims.size() * sizeof(cuuint64_t));
    w.put<uint8_t>(1).put_bytes(strides.data(), strides.size() * sizeof(cuuint64_t));
    w.put<uint8_t>(1).put_bytes(box.data(), box.size() * sizeof(cuuint32_t));
    w.put<uint8_t>(1).put_bytes(ones.data(), ones.size() * sizeof(cuuint32_t));
    w.put(CU_TENSOR_MAP_INTERLEAVE_NONE).put(CU_TENSOR_MAP_SWIZZLE_NONE).put(CU_TENSOR_MAP_L2_PROMOTION_NONE);
    w.put(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return w;
  };
  EXPECT_EQ(a->call(proto::kOp_cuTensorMapEncodeTiled, 0, tiled(2, ptr, 2).bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOp_cuTensorMapEncodeTiled, 0, tiled(2, ptr, 2).bytes(), {}, reply),
            cudaErrorInvalidValue);  // another session's memory
  EXPECT_EQ(a->call(proto::kOp_cuTensorMapEncodeTiled, 0, tiled(2, ptr, 1).bytes(), {}, reply),
            cudaErrorInvalidValue);  // fewer dimensions than the rank says
  EXPECT_EQ(a->call(proto::kOp_cuTensorMapEncodeTiled, 0, tiled(9, ptr, 9).bytes(), {}, reply),
            cudaErrorInvalidValue);  // more than the 5 carried
  CUtensorMap map{};
  proto::Writer replace;
  replace.put(map).put<uint64_t>(ptr + 4096);
  EXPECT_EQ(a->call(proto::kOp_cuTensorMapReplaceAddress, 0, replace.bytes(), {}, reply), cudaErrorInvalidValue);

  uint32_t one = 1;
  proto::Writer set_attr;
  set_attr.put_bytes(&one, 3).put(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS).put<uint64_t>(ptr);
  EXPECT_EQ(a->call(proto::kOp_cuPointerSetAttribute, 0, set_attr.bytes(), {}, reply), cudaErrorInvalidValue);

  char path[] = "/tmp/x";
  proto::Writer too_big;
  too_big.put(CU_COREDUMP_FILE).put<uint64_t>(1 << 20).put<uint8_t>(1).put_bytes(path, sizeof path);
  EXPECT_EQ(a->call(proto::kOp_cuCoredumpSetAttributeGlobal, 0, too_big.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer short_value;
  short_value.put(CU_COREDUMP_FILE).put<uint64_t>(64).put<uint8_t>(1).put_bytes(path, sizeof path);
  EXPECT_EQ(a->call(proto::kOp_cuCoredumpSetAttributeGlobal, 0, short_value.bytes(), {}, reply),
            cudaErrorInvalidValue);
  proto::Writer huge_get;
  huge_get.put(CU_COREDUMP_FILE).put<uint64_t>(1ull << 40).put<uint8_t>(1);
  EXPECT_EQ(a->call(proto::kOp_cuCoredumpGetAttributeGlobal, 0, huge_get.bytes(), {}, reply), cudaErrorInvalidValue);

  proto::Writer bind;
  bind.put<uint64_t>(0x77).put<size_t>(0).put<uint64_t>(0x78).put<size_t>(0).put<size_t>(4096).put<unsigned long long>(0);
  EXPECT_EQ(a->call(proto::kOp_cuMulticastBindMem, 0, bind.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer bind_addr;
  bind_addr.put<uint64_t>(0x77).put<size_t>(0).put<uint64_t>(ptr).put<size_t>(4096).put<unsigned long long>(0);
  EXPECT_EQ(a->call(proto::kOp_cuMulticastBindAddr, 0, bind_addr.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer add;
  add.put<uint64_t>(0x77).put<int32_t>(0);
  EXPECT_EQ(a->call(proto::kOp_cuMulticastAddDevice, 0, add.bytes(), {}, reply), cudaErrorInvalidValue);

  // Decompressions: every range the session's, a sane count.
  auto decompress = [&](uint64_t src, uint64_t src_bytes, uint32_t count) {
    proto::Writer w;
    w.put<uint64_t>(0).put<uint32_t>(0).put<uint32_t>(count);
    for (uint32_t i = 0; i < std::min<uint32_t>(count, 1); ++i)
      w.put<uint64_t>(src_bytes).put<uint64_t>(1024).put<uint64_t>(ptr + 4000).put<uint64_t>(src)
          .put<uint64_t>(ptr + 1024).put<int32_t>(CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE);
    return w;
  };
  ASSERT_EQ(a->call(proto::kOpMemBatchDecompress, 0, decompress(ptr, 512, 1).bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(proto::Reader(reply).get<int32_t>(), cudaErrorNotSupported);  // the test backend has no engine
  EXPECT_EQ(a->call(proto::kOpMemBatchDecompress, 0, decompress(ptr, 8192, 1).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(b->call(proto::kOpMemBatchDecompress, 0, decompress(ptr, 512, 1).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpMemBatchDecompress, 0, decompress(ptr, 512, 0).bytes(), {}, reply),
            cudaErrorInvalidValue);
  expect_healthy();
}

// A batch memory-operation node names only the session's memory, aligned,
// with known operations, whole records and at least one of them.
TEST_F(ServerFault, BatchMemOpNodesAreChecked) {
  auto a = session();
  auto b = session();
  std::vector<uint8_t> reply;
  proto::Writer m;
  m.put<uint64_t>(64);
  ASSERT_EQ(a->call(proto::kOpMalloc, 0, m.bytes(), {}, reply), cudaSuccess);
  uint64_t ptr = proto::Reader(reply).get<uint64_t>();
  proto::Writer create;
  create.put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t graph = proto::Reader(reply).get<uint64_t>();
  ASSERT_EQ(b->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t b_graph = proto::Reader(reply).get<uint64_t>();
  auto add = [&](uint64_t g, std::vector<proto::MemOpWire> ops, size_t cut = 0) {
    proto::GraphNodeParams p;
    p.type = proto::kGraphNodeTypeBatchMemOp;
    p.args.assign(reinterpret_cast<uint8_t*>(ops.data()),
                  reinterpret_cast<uint8_t*>(ops.data()) + ops.size() * sizeof(proto::MemOpWire) - cut);
    proto::Writer w;
    w.put(g).put<uint32_t>(0);
    proto::put_node(w, p);
    return w;
  };
  proto::MemOpWire write{CU_STREAM_MEM_OP_WRITE_VALUE_32, 0, ptr, 1};
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {write}).bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(b->call(proto::kOpGraphAddNode, 0, add(b_graph, {write}).bytes(), {}, reply), cudaErrorInvalidValue);
  proto::MemOpWire misaligned{CU_STREAM_MEM_OP_WRITE_VALUE_64, 0, ptr + 4, 1};
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {misaligned}).bytes(), {}, reply), cudaErrorInvalidValue);
  proto::MemOpWire past{CU_STREAM_MEM_OP_WRITE_VALUE_32, 0, ptr + 64, 1};
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {past}).bytes(), {}, reply), cudaErrorInvalidValue);
  proto::MemOpWire unknown{77, 0, ptr, 1};
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {unknown}).bytes(), {}, reply), cudaErrorInvalidValue);
  proto::MemOpWire barrier_with_address{CU_STREAM_MEM_OP_BARRIER, 0, ptr, 0};
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {barrier_with_address}).bytes(), {}, reply),
            cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {write}, 4).bytes(), {}, reply), cudaErrorInvalidValue);
  EXPECT_EQ(a->call(proto::kOpGraphAddNode, 0, add(graph, {}).bytes(), {}, reply), cudaErrorInvalidValue);
  expect_healthy();
}

TEST_F(ServerFault, GraphAllocationFreesAndCaptureEndsAreChecked) {
  auto a = session();
  std::vector<uint8_t> reply;
  proto::Writer create;
  create.put<uint32_t>(0);
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t graph = proto::Reader(reply).get<uint64_t>();
  ASSERT_EQ(a->call(proto::kOpGraphCreate, 0, create.bytes(), {}, reply), cudaSuccess);
  uint64_t other = proto::Reader(reply).get<uint64_t>();
  auto add = [&](uint64_t g, int32_t type, uint64_t dst, std::vector<uint8_t>& out) {
    proto::GraphNodeParams p;
    p.type = type;
    p.dst = dst;
    p.width = 256;
    proto::Writer w;
    w.put(g).put<uint32_t>(0);
    proto::put_node(w, p);
    return a->call(proto::kOpGraphAddNode, 0, w.bytes(), {}, out);
  };
  auto allocate = [&](uint64_t g) {
    EXPECT_EQ(add(g, cudaGraphNodeTypeMemAlloc, 0, reply), cudaSuccess);
    proto::Reader r(reply);
    r.get<uint64_t>();  // the node
    return r.get<uint64_t>();
  };
  auto free_memory = [&](uint64_t ptr) {
    proto::Writer f;
    f.put<uint64_t>(ptr);
    return a->call(proto::kOpFree, 0, f.bytes(), {}, reply);
  };
  std::vector<uint8_t> data(256, 1);
  iovec v{data.data(), data.size()};
  auto copy_to = [&](uint64_t ptr) {
    proto::Writer h2d;
    h2d.put<uint64_t>(ptr).put<uint64_t>(0).put<uint8_t>(1);
    return a->call(proto::kOpMemcpyHtoD, 0, h2d.bytes(), {&v, 1}, reply);
  };
  uint64_t own = allocate(graph);   // freed by its graph
  uint64_t kept = allocate(graph);  // left allocated
  ASSERT_EQ(add(graph, cudaGraphNodeTypeMemFree, own, reply), cudaSuccess);
  // Only its graph frees it, once.
  EXPECT_EQ(free_memory(own), cudaErrorInvalidValue);
  EXPECT_EQ(add(graph, cudaGraphNodeTypeMemFree, own, reply), cudaErrorInvalidValue);
  EXPECT_EQ(add(other, cudaGraphNodeTypeMemFree, own, reply), cudaErrorInvalidValue);
  // Memory a graph leaves allocated is the session's to use and free, once.
  EXPECT_EQ(copy_to(kept), cudaSuccess);
  proto::Writer destroy;
  destroy.put(graph);
  ASSERT_EQ(a->call(proto::kOpGraphDestroy, 0, destroy.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(copy_to(own), cudaErrorInvalidValue);  // ended with its graph
  EXPECT_EQ(copy_to(kept), cudaSuccess);
  EXPECT_EQ(free_memory(kept), cudaSuccess);
  EXPECT_EQ(free_memory(kept), cudaErrorInvalidValue);

  // Ending a capture with no graph output: a new capture's graph is dropped,
  // an existing graph captured into stays; either way the capture ends.
  proto::Writer sc;
  sc.put<uint32_t>(0).put<int32_t>(0);
  ASSERT_EQ(a->call(proto::kOpStreamCreate, 0, sc.bytes(), {}, reply), cudaSuccess);
  uint64_t stream = proto::Reader(reply).get<uint64_t>();
  auto end_capture = [&](bool wants_graph) {
    proto::Writer w;
    w.put(stream).put<uint8_t>(wants_graph);
    return a->call(proto::kOpStreamEndCapture, 0, w.bytes(), {}, reply);
  };
  proto::Writer begin;
  begin.put(stream).put<int32_t>(cudaStreamCaptureModeRelaxed);
  ASSERT_EQ(a->call(proto::kOpStreamBeginCapture, 0, begin.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(end_capture(false), cudaSuccess);
  EXPECT_EQ(proto::Reader(reply).get<uint64_t>(), 0u);
  EXPECT_EQ(end_capture(true), cudaErrorIllegalState);  // no capture any more
  proto::Writer into;
  into.put(stream).put(other).put<uint32_t>(0).put<int32_t>(cudaStreamCaptureModeRelaxed);
  ASSERT_EQ(a->call(proto::kOpStreamBeginCaptureToGraph, 0, into.bytes(), {}, reply), cudaSuccess);
  EXPECT_EQ(end_capture(false), cudaSuccess);
  EXPECT_EQ(end_capture(false), cudaErrorIllegalState);  // no capture any more
  expect_healthy();
}
