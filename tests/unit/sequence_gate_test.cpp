#include "server/worker/sequence_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace rgpu::server;
using namespace std::chrono_literals;

TEST(SequenceGate, UnnumberedRequestsPass) {
  SequenceGate gate;
  EXPECT_TRUE(gate.wait_turn(0));
  gate.started(0);
  EXPECT_TRUE(gate.wait_turn(1));
}

TEST(SequenceGate, ARequestWaitsForEveryEarlierOneToStart) {
  SequenceGate gate;
  std::atomic<bool> third_went{false};
  std::thread t([&] {
    EXPECT_TRUE(gate.wait_turn(3));
    third_went = true;
  });
  gate.started(1);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(third_went);
  gate.started(2);
  t.join();
  EXPECT_TRUE(third_went);
}

TEST(SequenceGate, StartingTwiceOrLateDoesNotGoBack) {
  SequenceGate gate;
  gate.started(1);
  gate.started(2);
  gate.started(1);
  EXPECT_TRUE(gate.wait_turn(3));
}

TEST(SequenceGate, ClosingReleasesWaitersWithFalse) {
  SequenceGate gate;
  std::thread t([&] { EXPECT_FALSE(gate.wait_turn(10)); });
  std::this_thread::sleep_for(20ms);
  gate.close();
  t.join();
  EXPECT_FALSE(gate.wait_turn(1));
}
