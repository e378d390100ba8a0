// The default poll window follows how crowded the host's CPUs are.
#include "transport/poll_window.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using rgpu::transport::default_poll_window;

TEST(PollWindow, LongWhileThereIsRoomShortOnceThreadsCrowdTheCpus) {
  EXPECT_EQ(default_poll_window(1, 32), 200us);   // one client
  EXPECT_EQ(default_poll_window(17, 32), 200us);  // 8 tenants, a client and a worker each (measured)
  EXPECT_EQ(default_poll_window(21, 32), 200us);  // two thirds of the CPUs
  EXPECT_EQ(default_poll_window(22, 32), 50us);
  EXPECT_EQ(default_poll_window(26, 32), 50us);   // 16 tenants (measured)
  EXPECT_EQ(default_poll_window(2, 2), 50us);     // a CI machine running the tests
  EXPECT_EQ(default_poll_window(0, 1), 200us);    // /proc/loadavg unreadable
}
