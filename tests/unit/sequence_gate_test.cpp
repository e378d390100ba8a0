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
  std::thread t([&] { EXPECT_EQ(gate.wait_turn(100, 0, [&] { return gone.load(); }), SequenceGate::Turn::abandoned); });
  std::this_thread::sleep_for(50ms);
  gone = true;
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

// The parts of one copy (numbered 4 to 7, parts_before 0 to 3) start at once
// after request 3, in any order; request 8 waits for every part.
TEST(SequenceGate, PartsOfACopyStartTogetherAndLaterRequestsWaitForAll) {
  SequenceGate gate;
  for (uint64_t s = 1; s <= 2; ++s) gate.started(s);
  std::atomic<bool> part_went{false};
  std::thread early([&] {
    EXPECT_EQ(gate.wait_turn(7, 3), SequenceGate::Turn::go);
    part_went = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(part_went);  // request 3 has not started
  gate.started(3);
  early.join();
  for (unsigned i : {3u, 1u, 2u}) EXPECT_EQ(gate.wait_turn(4 + i, i), SequenceGate::Turn::go);
  EXPECT_EQ(gate.wait_turn(4, 0), SequenceGate::Turn::go);
  std::atomic<bool> next_went{false};
  std::thread next([&] {
    EXPECT_EQ(gate.wait_turn(8), SequenceGate::Turn::go);
    next_went = true;
  });
  for (uint64_t s : {7, 5, 6}) gate.started(s);
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(next_went);  // part 4 is still being queued
  gate.started(4);
  next.join();
  EXPECT_TRUE(next_went);
}

// A peer's group cannot reach back past its own first request, nor start
// anything far ahead of what has started.
TEST(SequenceGate, PartsCannotReachBeforeTheStartOrFarAhead) {
  SequenceGate gate;
  EXPECT_EQ(gate.wait_turn(1, 200), SequenceGate::Turn::go);
  std::atomic<bool> went{false};
  std::thread t([&] {
    EXPECT_EQ(gate.wait_turn(1000, 0xffffffffu), SequenceGate::Turn::go);
    went = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(went);  // at most kMaxPartsBefore back: it waits for request 744
  gate.started(1000);  // ignored: far beyond what has started
  for (uint64_t s = 1; s <= 744; ++s) gate.started(s);
  t.join();
  EXPECT_EQ(gate.wait_turn(745), SequenceGate::Turn::go);
}
