// The staging pipeline against the host-memory test backend, over a socket
// pair: sizes around block boundaries, whole payloads in and out.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <numeric>
#include <thread>

#include "protocol/wire.hpp"
#include "server/backend/host/host_backend.hpp"
#include "server/worker/copy_pipeline.hpp"
#include "server/worker/reply.hpp"
#include "transport/transport.hpp"

using namespace rgpu;
using namespace rgpu::server;

namespace {

struct Pair {
  std::unique_ptr<transport::Connection> client, server;
  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    auto tcp = transport::make_tcp_transport();
    client = tcp->adopt(sv[0]);
    server = tcp->adopt(sv[1]);
  }
};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + (i >> 12));
  return v;
}

class CopyPipeline : public ::testing::TestWithParam<size_t> {
 protected:
  std::unique_ptr<Backend> backend = make_host_test_backend();
  SessionContext session{*backend, {0}, ""};
};

TEST_P(CopyPipeline, HostToDeviceLandsEveryByte) {
  size_t n = GetParam();
  DevPtr dev = 0;
  ASSERT_EQ(backend->malloc(&dev, n + 1), 0);
  Pair p;
  auto data = pattern(n);
  std::thread sender([&] {
    iovec v{data.data(), data.size()};
    p.client->send({&v, 1});
  });
  proto::FrameHeader h{.magic = proto::kFrameMagic, .payload_len = n};
  Lane lane(*p.server);
  Request req(h, {}, lane);
  int32_t e = pipeline_in(session, req, n, 1, 0, true, [&](void* buf, size_t off, size_t len) {
    return backend->memcpy_async(reinterpret_cast<void*>(dev + off), buf, len, cudaMemcpyHostToDevice, 0);
  });
  sender.join();
  EXPECT_EQ(e, 0);
  EXPECT_EQ(req.payload_left(), 0u);
  EXPECT_EQ(std::memcmp(reinterpret_cast<void*>(dev), data.data(), n), 0);
}

TEST_P(CopyPipeline, DeviceToHostStreamsPayloadThenStatus) {
  size_t n = GetParam();
  auto data = pattern(n);
  DevPtr dev = reinterpret_cast<DevPtr>(data.data());
  Pair p;
  std::vector<uint8_t> received(n);
  proto::FrameHeader reply{};
  int32_t status = -1;
  std::thread receiver([&] {
    p.client->recv(&reply, sizeof reply);
    std::vector<uint8_t> args(reply.args_len);
    p.client->recv(args.data(), args.size());
    p.client->recv(received.data(), n);
    p.client->recv(&status, sizeof status);
  });
  proto::FrameHeader h{.magic = proto::kFrameMagic};
  Lane lane(*p.server);
  Request req(h, {}, lane);
  begin_streamed_reply(lane, n);
  pipeline_out(session, req, n, 1, 0, [&](void* buf, size_t off, size_t len) {
    return backend->memcpy_async(buf, reinterpret_cast<void*>(dev + off), len, cudaMemcpyDeviceToHost, 0);
  });
  receiver.join();
  EXPECT_EQ(reply.payload_len, n + sizeof(int32_t));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(received, data);
}

// Blocks a transfer is cut into, with the client's block size or by size.
std::vector<size_t> block_lengths(size_t total, size_t asked) {
  auto backend = make_host_test_backend();
  SessionContext session{*backend, {0}, ""};
  session.pipeline_block = asked;
  Pair p;
  std::vector<uint8_t> data(total, 1);
  std::thread sender([&] {
    iovec v{data.data(), data.size()};
    p.client->send({&v, 1});
  });
  proto::FrameHeader h{.magic = proto::kFrameMagic, .payload_len = total};
  Lane lane(*p.server);
  Request req(h, {}, lane);
  std::vector<size_t> lengths;
  EXPECT_EQ(pipeline_in(session, req, total, 1, 0, true, [&](void*, size_t, size_t len) {
              lengths.push_back(len);
              return 0;
            }),
            0);
  sender.join();
  return lengths;
}

TEST(CopyPipelineBlocks, ChosenBySizeOrAsked) {
  // By size: a 1 MB copy still fills the four staging slots.
  EXPECT_EQ(block_lengths(1 << 20, 0), std::vector<size_t>(4, 256 * 1024));
  // Large copies use whole slots.
  EXPECT_EQ(block_lengths(64 << 20, 0), std::vector<size_t>(16, StagingPool::kBlockBytes));
  // The client's size, the last block shorter.
  auto asked = block_lengths(1000 * 1000, 300 * 1024);
  EXPECT_EQ(asked, (std::vector<size_t>{307200, 307200, 307200, 78400}));
  // Small copies go in one piece.
  EXPECT_EQ(block_lengths(4096, 300 * 1024), std::vector<size_t>{4096});
}

constexpr size_t kBlock = StagingPool::kBlockBytes;
INSTANTIATE_TEST_SUITE_P(Sizes, CopyPipeline,
                         ::testing::Values(1, 64, kBlock - 1, kBlock, kBlock + 1, 3 * kBlock + kBlock / 2,
                                           9 * kBlock + 17));

TEST(CopyPipelineRows, BlocksAreWholeRows) {
  auto backend = make_host_test_backend();
  SessionContext session{*backend, {0}, ""};
  const size_t width = 3 * 1000 * 1000 + 7, rows = 5;  // a row bigger than a block
  Pair p;
  auto data = pattern(width * rows);
  std::thread sender([&] {
    iovec v{data.data(), data.size()};
    p.client->send({&v, 1});
  });
  proto::FrameHeader h{.magic = proto::kFrameMagic, .payload_len = data.size()};
  Lane lane(*p.server);
  Request req(h, {}, lane);
  std::vector<size_t> lengths;
  int32_t e = pipeline_in(session, req, data.size(), width, 0, true, [&](void*, size_t off, size_t len) {
    EXPECT_EQ(off % width, 0u);
    lengths.push_back(len);
    return 0;
  });
  sender.join();
  EXPECT_EQ(e, 0);
  EXPECT_EQ(std::accumulate(lengths.begin(), lengths.end(), size_t{0}), data.size());
  for (size_t len : lengths) EXPECT_EQ(len % width, 0u);
}

}  // namespace
