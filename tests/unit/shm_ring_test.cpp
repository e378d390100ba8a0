#include "transport/shm/shm_ring_connection.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "transport/shm/byte_ring.hpp"
#include "transport/shm/shared_memory.hpp"

using namespace rgpu::transport;
using namespace std::chrono_literals;

namespace {

struct RingPair {
  std::unique_ptr<Connection> client, server;
  RingPair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    client = ShmRingConnection::offer(sv[0]);
    server = std::make_unique<ShmRingConnection>(sv[1]);
  }
};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + (i >> 10));
  return v;
}

}  // namespace

TEST(ShmRing, EchoesEveryByteThroughWrapAround) {
  RingPair p;
  // Several times the ring's size, in pieces that do not divide it.
  const auto data = pattern(5 * (1 << 20) + 12345);
  std::thread echo([&] {
    std::vector<uint8_t> buf(70001);
    for (size_t done = 0; done < data.size();) {
      size_t n = std::min(buf.size(), data.size() - done);
      p.server->recv(buf.data(), n);
      iovec v{buf.data(), n};
      p.server->send({&v, 1});
      done += n;
    }
  });
  std::vector<uint8_t> back(data.size());
  std::thread reader([&] { p.client->recv(back.data(), back.size()); });
  for (size_t off = 0; off < data.size(); off += 9973) {
    iovec v{const_cast<uint8_t*>(data.data()) + off, std::min<size_t>(9973, data.size() - off)};
    p.client->send({&v, 1});
  }
  reader.join();
  echo.join();
  EXPECT_EQ(back, data);
}

TEST(ShmRing, WaitReadableTimesOutThenSeesData) {
  RingPair p;
  EXPECT_FALSE(p.server->wait_readable(20));
  char c = 'x';
  iovec v{&c, 1};
  p.client->send({&v, 1});
  EXPECT_TRUE(p.server->wait_readable(1000));
}

TEST(ShmRing, DescriptorArrivesWithItsFrame) {
  RingPair p;
  SharedMemory mem = create_shared_memory(4096);
  char frame[16] = "register";
  iovec v{frame, sizeof frame};
  p.client->send_with_fd({&v, 1}, mem.fd);
  char got[16];
  p.server->recv(got, sizeof got);
  EXPECT_STREQ(got, "register");
  int fd = p.server->take_fd();
  EXPECT_GE(fd, 0);
  EXPECT_EQ(p.server->take_fd(), -1);
  close(fd);
  release_shared_memory(mem);
}

TEST(ShmRing, BlockedReaderLearnsThePeerDied) {
  RingPair p;
  char c = 'x';
  iovec v{&c, 1};
  p.client->send({&v, 1});
  std::thread gone([&] {
    std::this_thread::sleep_for(50ms);
    p.client.reset();
  });
  char got;
  p.server->recv(&got, 1);  // data sent before the peer went is still read
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(p.server->recv(&got, 1), TransportError);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  gone.join();
}

TEST(ShmRing, ShutdownWakesABlockedReader) {
  RingPair p;
  std::thread stop([&] {
    std::this_thread::sleep_for(50ms);
    p.server->shutdown();
  });
  char got;
  EXPECT_THROW(p.server->recv(&got, 1), TransportError);
  stop.join();
}

TEST(ShmRing, ServerWithoutAnOfferGivesUp) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ShmRingConnection server(sv[1]);
  char junk = 'R';
  ASSERT_EQ(write(sv[0], &junk, 1), 1);  // the tag, but no descriptor
  char got;
  EXPECT_THROW(server.recv(&got, 1), TransportError);
  close(sv[0]);
}

TEST(ByteRing, IndicesCorruptedByThePeerAreRefused) {
  RingControl control{};
  std::vector<char> data(4096);
  ByteRing ring(&control, data.data(), data.size(), [] {});
  control.head = data.size() + 1;  // more unread bytes than the ring holds
  char got;
  EXPECT_THROW(ring.read(&got, 1), TransportError);
  char c = 0;
  EXPECT_THROW(ring.write(&c, 1), TransportError);
}
