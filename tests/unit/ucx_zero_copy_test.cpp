// Zero-copy bulk copies over ucx, against the host-memory test backend
// (whose device memory is host memory, which UCX always reaches): the
// decision, bytes landing in place with no staged block, the staging
// fallback for bytes the peer sent gathered, and the switch that turns it
// off. The GPU-memory case runs in the GPU suite (tools/gpu-suite.sh, ucx).
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "protocol/wire.hpp"
#include "server/backend/host/host_backend.hpp"
#include "server/worker/copy_pipeline.hpp"
#include "server/worker/reply.hpp"
#include "server/worker/zero_copy.hpp"
#include "transport/transport.hpp"

using namespace rgpu;
using namespace rgpu::server;

namespace {

struct Pair {
  std::unique_ptr<transport::Connection> client, server;
};

Pair ucx_pair() {
  auto listener = transport::make_ucx_transport()->listen({"127.0.0.1", 0});
  Pair p;
  // The server's end swaps addresses at its first use (ucx_listener.cpp).
  std::thread accepting([&] {
    p.server = listener->accept();
    p.server->wait_readable(0);
  });
  p.client = transport::make_ucx_transport()->connect({"127.0.0.1", listener->local_endpoint().port}, 2000);
  accepting.join();
  return p;
}

Pair tcp_pair() {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  auto tcp = transport::make_tcp_transport();
  return {tcp->adopt(sv[0]), tcp->adopt(sv[1])};
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed + (i >> 12));
  return v;
}

class UcxZeroCopy : public ::testing::Test {
 protected:
  // On, as RGPU_UCX_ZERO_COPY=1 makes it (off by default).
  UcxZeroCopy() { session.zero_copy = true; }

  // Runs a host-to-device copy of `data`, the client sending it in pieces of
  // `piece` bytes; returns the bytes that went through staging blocks.
  size_t copy_in(const std::vector<uint8_t>& data, size_t piece) {
    DevPtr dev = 0;
    EXPECT_EQ(backend->malloc(&dev, data.size()), 0);
    std::thread sender([&] {
      for (size_t off = 0; off < data.size();) {
        iovec v{const_cast<uint8_t*>(data.data()) + off, std::min(piece, data.size() - off)};
        off += v.iov_len;
        pair.client->send({&v, 1}, off < data.size());
      }
    });
    proto::FrameHeader h{.magic = proto::kFrameMagic, .payload_len = data.size()};
    Lane lane(*pair.server);
    Request req(h, {}, lane);
    size_t staged = 0;
    auto* device = reinterpret_cast<void*>(dev);
    int32_t e = pipeline_in(
        session, req, data.size(), 1, 0, true,
        [&](void* buf, size_t off, size_t len) {
          staged += len;
          return backend->memcpy_async(static_cast<uint8_t*>(device) + off, buf, len, cudaMemcpyHostToDevice, 0);
        },
        device);
    sender.join();
    EXPECT_EQ(e, 0);
    EXPECT_EQ(req.payload_left(), 0u);
    EXPECT_EQ(std::memcmp(device, data.data(), data.size()), 0);
    return staged;
  }

  // Runs a device-to-host copy of `data`; returns the bytes staged.
  size_t copy_out(const std::vector<uint8_t>& data) {
    std::vector<uint8_t> received(data.size());
    int32_t status = -1;
    std::thread receiver([&] {
      proto::FrameHeader reply{};
      pair.client->recv(&reply, sizeof reply);
      std::vector<uint8_t> args(reply.args_len);
      pair.client->recv(args.data(), args.size());
      pair.client->recv(received.data(), received.size());
      pair.client->recv(&status, sizeof status);
    });
    proto::FrameHeader h{.magic = proto::kFrameMagic};
    Lane lane(*pair.server);
    Request req(h, {}, lane);
    begin_streamed_reply(lane, data.size());
    size_t staged = 0;
    pipeline_out(
        session, req, data.size(), 1, 0,
        [&](void* buf, size_t off, size_t len) {
          staged += len;
          return backend->memcpy_async(buf, data.data() + off, len, cudaMemcpyDeviceToHost, 0);
        },
        data.data());
    receiver.join();
    EXPECT_EQ(status, 0);
    EXPECT_EQ(received, data);
    return staged;
  }

  std::unique_ptr<Backend> backend = make_host_test_backend();
  SessionContext session{*backend, {0}, ""};

  Pair pair = ucx_pair();
};

TEST(ZeroCopyDecision, OffUnlessTurnedOn) {
  EXPECT_FALSE(zero_copy_enabled(nullptr));
  EXPECT_TRUE(zero_copy_enabled("1"));
  EXPECT_FALSE(zero_copy_enabled("0"));
}

TEST(ZeroCopyDecision, OnlyWhereTheConnectionReachesDeviceMemoryAndTheStreamCanWait) {
  auto backend = make_host_test_backend();
  ASSERT_EQ(backend->device_memory(), transport::MemoryKind::host);
  Pair ucx = ucx_pair(), tcp = tcp_pair();
  EXPECT_TRUE(ucx.server->zero_copy(transport::MemoryKind::host));
  EXPECT_TRUE(zero_copy_applies(true, *ucx.server, *backend, 0));
  EXPECT_FALSE(zero_copy_applies(false, *ucx.server, *backend, 0));
  EXPECT_FALSE(tcp.server->zero_copy(transport::MemoryKind::host));
  EXPECT_FALSE(zero_copy_applies(true, *tcp.server, *backend, 0));
  // A capturing stream takes copies into its graph: staged.
  Handle stream = 0;
  ASSERT_EQ(backend->stream_create(&stream, cudaStreamNonBlocking, 0), 0);
  ASSERT_EQ(backend->graphs().begin_capture(stream, cudaStreamCaptureModeRelaxed), 0);
  EXPECT_FALSE(zero_copy_applies(true, *ucx.server, *backend, stream));
  Handle graph = 0;
  ASSERT_EQ(backend->graphs().end_capture(stream, &graph), 0);
  EXPECT_TRUE(zero_copy_applies(true, *ucx.server, *backend, stream));
}

TEST_F(UcxZeroCopy, HostToDeviceLandsInPlace) {
  EXPECT_EQ(copy_in(pattern((8 << 20) + 123, 1), SIZE_MAX), 0u);
}

TEST_F(UcxZeroCopy, BytesSentGatheredAreStaged) {
  // Pieces under the transport's registration size travel copied: staged.
  auto data = pattern(3 << 20, 2);
  EXPECT_EQ(copy_in(data, 100 * 1024), data.size());
}

TEST_F(UcxZeroCopy, MixedPiecesLandInPlaceOrStaged) {
  // Small, large, small, in blocks of 256 KiB: a block that starts with
  // gathered bytes is staged whole (the first), one that ends with them
  // lands in place up to them (the last): 256 KiB + 4 KiB staged.
  session.pipeline_block = 256 * 1024;
  auto data = pattern((1 << 20) + 2 * 4096, 3);
  DevPtr dev = 0;
  ASSERT_EQ(backend->malloc(&dev, data.size()), 0);
  std::thread sender([&] {
    iovec parts[3] = {{data.data(), 4096}, {data.data() + 4096, 1 << 20}, {data.data() + 4096 + (1 << 20), 4096}};
    pair.client->send(parts);
  });
  proto::FrameHeader h{.magic = proto::kFrameMagic, .payload_len = data.size()};
  Lane lane(*pair.server);
  Request req(h, {}, lane);
  size_t staged = 0;
  auto* device = reinterpret_cast<uint8_t*>(dev);
  EXPECT_EQ(pipeline_in(
                session, req, data.size(), 1, 0, true,
                [&](void* buf, size_t off, size_t len) {
                  staged += len;
                  return backend->memcpy_async(device + off, buf, len, cudaMemcpyHostToDevice, 0);
                },
                device),
            0);
  sender.join();
  EXPECT_EQ(staged, 256u * 1024 + 4096);
  EXPECT_EQ(std::memcmp(device, data.data(), data.size()), 0);
}

TEST_F(UcxZeroCopy, DeviceToHostIsReadInPlace) {
  EXPECT_EQ(copy_out(pattern((6 << 20) + 5, 4)), 0u);
}

TEST_F(UcxZeroCopy, TurnedOffEveryByteIsStaged) {
  session.zero_copy = false;
  auto data = pattern((4 << 20) + 9, 5);
  EXPECT_EQ(copy_in(data, SIZE_MAX), data.size());
  EXPECT_EQ(copy_out(data), data.size());
}

}  // namespace
