// The ucx transport over loopback (UCX picks its transports: shared memory,
// cma, tcp; UCX_TLS narrows them): byte-stream semantics whatever the
// message boundaries, large pieces read in the receiver's own portions,
// wait/shutdown behaviour, and refusal of peers that are not rgpu's.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "transport/transport.hpp"

using namespace rgpu;

namespace {

struct Pair {
  std::unique_ptr<transport::Connection> client, server;
};

Pair connected_pair(transport::Listener& listener) {
  Pair p;
  // The server's end swaps addresses at its first use (ucx_listener.cpp).
  std::thread accepting([&] {
    p.server = listener.accept();
    p.server->wait_readable(0);
  });
  p.client = transport::make_ucx_transport()->connect({"127.0.0.1", listener.local_endpoint().port}, 2000);
  accepting.join();
  return p;
}

class UcxTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    listener_ = transport::make_ucx_transport()->listen({"127.0.0.1", 0});
    pair_ = connected_pair(*listener_);
  }
  std::unique_ptr<transport::Listener> listener_;
  Pair pair_;
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed + (i >> 16));
  return v;
}

void send_all(transport::Connection& c, const std::vector<uint8_t>& bytes, bool more = false) {
  iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  c.send({&v, 1}, more);
}

}  // namespace

TEST_F(UcxTransport, SmallPiecesArriveAsOneStreamBothWays) {
  auto a = pattern(10, 1), b = pattern(3000, 2), c = pattern(7, 3);
  // Held back with `more`, then sent together; read in other portions.
  send_all(*pair_.client, a, true);
  send_all(*pair_.client, b, true);
  send_all(*pair_.client, c);
  std::vector<uint8_t> got(a.size() + b.size() + c.size());
  pair_.server->recv(got.data(), 5);
  pair_.server->recv(got.data() + 5, got.size() - 5);
  std::vector<uint8_t> want(a);
  want.insert(want.end(), b.begin(), b.end());
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(got, want);
  send_all(*pair_.server, c);
  std::vector<uint8_t> back(c.size());
  pair_.client->recv(back.data(), back.size());
  EXPECT_EQ(back, c);
}

TEST_F(UcxTransport, LargePieceIsReadInTheReceiversPortions) {
  // A header, a large payload and a trailer in one send, as a copy's frame
  // travels; the receiver takes the payload in odd blocks as a staging
  // pipeline does, and a last portion that spans payload and trailer.
  auto header = pattern(24, 4), payload = pattern((8 << 20) + 123, 5), trailer = pattern(4, 6);
  iovec parts[3] = {{header.data(), header.size()}, {payload.data(), payload.size()}, {trailer.data(), trailer.size()}};
  std::thread sender([&] { pair_.client->send(parts); });
  std::vector<uint8_t> got(header.size() + payload.size() + trailer.size());
  size_t off = 0;
  pair_.server->recv(got.data(), header.size());
  off += header.size();
  for (size_t block = 300 * 1024 + 7; off + block < got.size(); off += block) pair_.server->recv(got.data() + off, block);
  pair_.server->recv(got.data() + off, got.size() - off);
  sender.join();
  EXPECT_TRUE(std::equal(header.begin(), header.end(), got.begin()));
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), got.begin() + header.size()));
  EXPECT_TRUE(std::equal(trailer.begin(), trailer.end(), got.end() - trailer.size()));
}

TEST_F(UcxTransport, BlocksSentApartAreReadAsOneLargeRead) {
  // The server's side of a device-to-host copy: blocks sent one by one,
  // received by one read into the application's buffer.
  std::vector<std::vector<uint8_t>> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(pattern(1 << 20, static_cast<uint8_t>(10 + i)));
  std::thread sender([&] {
    for (auto& b : blocks) send_all(*pair_.server, b, true);
    send_all(*pair_.server, pattern(4, 99));
  });
  std::vector<uint8_t> got(5 << 20), tail(4);
  pair_.client->recv(got.data(), got.size());
  pair_.client->recv(tail.data(), tail.size());
  sender.join();
  for (int i = 0; i < 5; ++i)
    EXPECT_TRUE(std::equal(blocks[i].begin(), blocks[i].end(), got.begin() + (size_t(i) << 20))) << "block " << i;
  EXPECT_EQ(tail, pattern(4, 99));
}

TEST_F(UcxTransport, BothDirectionsAtOnce) {
  auto up = pattern(3 << 20, 20), down = pattern(2 << 20, 21);
  std::vector<uint8_t> got_up(up.size()), got_down(down.size());
  std::thread server([&] {
    pair_.server->recv(got_up.data(), got_up.size());
    send_all(*pair_.server, down);
  });
  send_all(*pair_.client, up);
  pair_.client->recv(got_down.data(), got_down.size());
  server.join();
  EXPECT_EQ(got_up, up);
  EXPECT_EQ(got_down, down);
}

TEST_F(UcxTransport, WaitReadableTimesOutThenSeesData) {
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(pair_.server->wait_readable(100));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90));
  send_all(*pair_.client, pattern(1, 0));
  EXPECT_TRUE(pair_.server->wait_readable(2000));
}

TEST_F(UcxTransport, PeerGoneIsAnErrorNotAHang) {
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pair_.client.reset();
  });
  uint8_t b;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(pair_.server->recv(&b, 1), transport::TransportError);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  closer.join();
  EXPECT_THROW(send_all(*pair_.server, pattern(1 << 20, 0)), transport::TransportError);
}

TEST_F(UcxTransport, ShutdownWakesABlockedReceive) {
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pair_.server->shutdown();
  });
  uint8_t b;
  EXPECT_THROW(pair_.server->recv(&b, 1), transport::TransportError);
  stopper.join();
}

TEST_F(UcxTransport, ListenerBesideAConnectionAcceptsMoreOfItsKind) {
  auto beside = pair_.server->listen_beside();
  ASSERT_NE(beside->local_endpoint().port, 0);
  Pair more = connected_pair(*beside);
  send_all(*more.client, pattern(100, 7));
  std::vector<uint8_t> got(100);
  more.server->recv(got.data(), got.size());
  EXPECT_EQ(got, pattern(100, 7));
  EXPECT_FALSE(more.server->passes_descriptors());
  EXPECT_THROW(more.server->send_with_fd({}, 0), transport::TransportError);
}

TEST_F(UcxTransport, APeerThatIsNotRgpusIsRefused) {
  std::thread garbage([&] {
    auto c = transport::make_tcp_transport()->connect({"127.0.0.1", listener_->local_endpoint().port}, 2000);
    auto junk = pattern(64, 1);
    send_all(*c, junk);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  // Refused at its first use, in the thread that serves it: accept() waits on no peer.
  auto refused = listener_->accept();
  EXPECT_THROW(refused->wait_readable(0), transport::TransportError);
  garbage.join();
}

// The registration cache (both ends of the pair share this process's):
// page-locked memory the client announces is registered once, its copies
// reuse that registration, other memory is registered per copy, and the
// announced range's registration goes when the application frees it.
TEST_F(UcxTransport, PageLockedMemoryIsRegisteredOnceUntilFreed) {
  auto ucx = transport::make_ucx_transport();
  // The application's page-locked range is storage's first 4 MB.
  auto storage = pattern(5 << 20, 30), other = pattern(1 << 20, 31);
  uint8_t* pinned = storage.data();
  const size_t pinned_len = 4 << 20;
  std::vector<uint8_t> got(2 << 20);
  // One copy of `len` bytes at `from`, client to server.
  auto copy_up = [&](const uint8_t* from, size_t len) {
    std::thread sender([&] {
      iovec v{const_cast<uint8_t*>(from), len};
      pair_.client->send({&v, 1});
    });
    pair_.server->recv(got.data(), len);
    sender.join();
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + len, from));
  };
  const auto start = ucx->registration_counts();
  // Registrations made, reused and released since the start.
  auto since = [&] {
    auto c = ucx->registration_counts();
    return std::array<uint64_t, 3>{c.made - start.made, c.reused - start.reused, c.released - start.released};
  };
  using Counts = std::array<uint64_t, 3>;

  ucx->register_memory(pinned, pinned_len);
  ucx->register_memory(pinned, pinned_len);  // again: nothing new
  EXPECT_EQ(since(), (Counts{1, 0, 0}));
  // Hits: the range's registration serves copies of any part of it.
  copy_up(pinned, 1 << 20);
  copy_up(pinned + (3 << 20), 1 << 20);
  copy_up(pinned + 4096, 512 * 1024);
  EXPECT_EQ(since(), (Counts{1, 3, 0}));
  // Misses, registered for the one copy: other memory, a copy past the end.
  copy_up(other.data(), other.size());
  EXPECT_EQ(since(), (Counts{2, 3, 1}));
  copy_up(pinned + (3 << 20) + 4096, 1 << 20);
  EXPECT_EQ(since(), (Counts{3, 3, 2}));
  // Receiving into the range reuses its registration (the sender's is
  // per copy).
  std::thread down([&] { send_all(*pair_.server, other); });
  pair_.client->recv(pinned, other.size());
  down.join();
  EXPECT_TRUE(std::equal(other.begin(), other.end(), pinned));
  EXPECT_EQ(since(), (Counts{4, 4, 3}));
  // Freed: released at once; a later copy from there registers anew.
  ucx->unregister_memory(pinned);
  EXPECT_EQ(since(), (Counts{4, 4, 4}));
  copy_up(pinned, 1 << 20);
  EXPECT_EQ(since(), (Counts{5, 4, 5}));
}
