#include "server/worker/sequence_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace rgpu::server;
using namespace std::chrono_literals;

TEST(SequenceGate, UnnumberedRequestsPass) {
  SequenceGate gate;
  EXPECT_EQ(gate.wait_turn(0), SequenceGate::Turn::go);
  gate.started(0);
  EXPECT_EQ(gate.wait_turn(1), SequenceGate::Turn::go);
}

TEST(SequenceGate, ARequestWaitsForEveryEarlierOneToStart) {
  SequenceGate gate;
  std::atomic<bool> third_went{false};
  std::thread t([&] {
    EXPECT_EQ(gate.wait_turn(3), SequenceGate::Turn::go);
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
  EXPECT_EQ(gate.wait_turn(3), SequenceGate::Turn::go);
}

TEST(SequenceGate, ClosingReleasesWaiters) {
  SequenceGate gate;
  std::thread t([&] { EXPECT_EQ(gate.wait_turn(10), SequenceGate::Turn::closed); });
  std::this_thread::sleep_for(20ms);
  gate.close();
  t.join();
  EXPECT_EQ(gate.wait_turn(1), SequenceGate::Turn::closed);
}

// A request numbered far beyond anything in flight would wait forever.
TEST(SequenceGate, RequestsTooFarAheadAreRefusedAtOnce) {
  SequenceGate gate;
  gate.started(5);
  EXPECT_EQ(gate.wait_turn(5 + SequenceGate::kMaxAhead + 1), SequenceGate::Turn::out_of_range);
  EXPECT_EQ(gate.wait_turn(~uint64_t{0}), SequenceGate::Turn::out_of_range);
}

// A waiter whose connection is gone stops waiting, though nothing started.
TEST(SequenceGate, AWaiterWhoseConnectionIsGoneGivesUp) {
  SequenceGate gate;
  std::atomic<bool> gone{false};
  auto start = std::chrono::steady_clock::now();
  std::thread t([&] { EXPECT_EQ(gate.wait_turn(100, [&] { return gone.load(); }), SequenceGate::Turn::abandoned); });
  std::this_thread::sleep_for(50ms);
  gone = true;
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}
