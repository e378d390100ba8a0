#include "server/backend/host/host_node_fence.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using rgpu::server::HostNodeFence;

// Work on a device waits while a host node runs there, and only there.
TEST(HostNodeFence, WorkWaitsForTheDevicesRunningHostNodes) {
  HostNodeFence fence;
  fence.await(0);  // none running: at once
  fence.began(0);
  fence.await(1);  // another device's work goes on
  std::atomic<bool> through{false};
  std::thread waiter([&] {
    fence.await(0);
    through = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(through);
  fence.ended(0);
  waiter.join();
  EXPECT_TRUE(through);
}
