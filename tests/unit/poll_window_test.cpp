// The default poll window follows how crowded the host's CPUs are.
#include "transport/poll_window.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using rgpu::transport::default_poll_window;

TEST(PollWindow, LongWhileThereIsRoomShortOnceThreadsCrowdTheCpus) {
  EXPECT_EQ(default_poll_window(1, 32), 200us);   // one client
  EXPECT_EQ(default_poll_window(18, 32), 200us);  // 8 tenants, a client and a worker each
  EXPECT_EQ(default_poll_window(24, 32), 200us);  // three quarters of the CPUs
  EXPECT_EQ(default_poll_window(25, 32), 50us);
  EXPECT_EQ(default_poll_window(34, 32), 50us);   // 16 tenants
  EXPECT_EQ(default_poll_window(2, 2), 50us);     // a CI machine running the tests
  EXPECT_EQ(default_poll_window(0, 1), 200us);    // /proc/loadavg unreadable
}
