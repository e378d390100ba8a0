// The deadline over a connection's hello (hello_deadline.hpp): it shuts the
// socket down when it passes, waking a blocked read, and never once disarmed.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "server/worker/hello_deadline.hpp"

using rgpu::server::HelloDeadline;
using namespace std::chrono_literals;

TEST(HelloDeadline, WakesABlockedReadWhenItPasses) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const auto start = std::chrono::steady_clock::now();
  HelloDeadline deadline(sv[0], 100ms);
  HelloDeadline later(sv[1], 10s);  // another one armed meanwhile
  char b;
  EXPECT_EQ(recv(sv[0], &b, 1, 0), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_TRUE(deadline.expired());
  EXPECT_FALSE(later.expired());
  later.disarm();
  close(sv[0]);
  close(sv[1]);
}

TEST(HelloDeadline, DisarmedLeavesTheSocketUp) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  {
    HelloDeadline deadline(sv[0], 50ms);
    deadline.disarm();
  }
  std::this_thread::sleep_for(150ms);
  ASSERT_EQ(send(sv[1], "x", 1, 0), 1);
  char b;
  EXPECT_EQ(recv(sv[0], &b, 1, 0), 1);
  close(sv[0]);
  close(sv[1]);
}
