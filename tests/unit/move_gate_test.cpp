// The pause a session move needs: calls stop at their boundary, a call in
// progress is waited for, host callbacks' calls pass until the move stops
// them too, and nested calls count once.
#include "client/core/move_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;
using rgpu::client::CallBoundary;
using rgpu::client::MoveGate;

namespace {

// A thread that makes one call lasting `inside` once `go` is set, and
// records when the call began.
struct Caller {
  std::atomic<bool> go{false}, began{false}, done{false};
  std::thread thread;
  Caller(bool callback_thread, std::chrono::milliseconds inside) {
    thread = std::thread([this, callback_thread, inside] {
      if (callback_thread) MoveGate::mark_callback_thread();
      while (!go) std::this_thread::sleep_for(1ms);
      CallBoundary call;
      began = true;
      std::this_thread::sleep_for(inside);
      done = true;
    });
  }
  ~Caller() { thread.join(); }
};

}  // namespace

TEST(MoveGate, NewCallsWaitWhileStoppedAndGoOnWhenReopened) {
  ASSERT_TRUE(MoveGate::stop_calls(1s));
  Caller c(false, 0ms);
  c.go = true;
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(c.began);  // held at the boundary
  MoveGate::reopen();
  for (int i = 0; i < 200 && !c.done; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(c.done);
}

TEST(MoveGate, StoppingWaitsForACallInProgress) {
  Caller c(false, 150ms);
  c.go = true;
  while (!c.began) std::this_thread::sleep_for(1ms);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(MoveGate::stop_calls(5s));
  EXPECT_TRUE(c.done);  // the call finished before the gate reported stopped
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
  MoveGate::reopen();
}

TEST(MoveGate, ACallThatDoesNotEndInTimeRefusesTheStopAndReopens) {
  Caller c(false, 300ms);
  c.go = true;
  while (!c.began) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(MoveGate::stop_calls(50ms));
  // Reopened: a new call goes through at once.
  Caller d(false, 0ms);
  d.go = true;
  for (int i = 0; i < 200 && !d.done; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(d.done);
}

TEST(MoveGate, HostCallbacksPassUntilTheyAreStoppedToo) {
  ASSERT_TRUE(MoveGate::stop_calls(1s));
  {
    Caller callback(true, 0ms);
    callback.go = true;  // a callback an application thread's synchronize waits for
    for (int i = 0; i < 200 && !callback.done; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(callback.done);
  }
  ASSERT_TRUE(MoveGate::stop_callbacks(1s));
  Caller late(true, 0ms);
  late.go = true;
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(late.began);
  MoveGate::reopen();
  for (int i = 0; i < 200 && !late.done; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(late.done);
}

TEST(MoveGate, NestedCallsPassAClosedGateAndTheMoverNeverWaits) {
  std::atomic<bool> inside{false}, nested_done{false};
  std::thread app([&] {
    CallBoundary outer;
    inside = true;
    std::this_thread::sleep_for(100ms);  // the mover is stopping the calls by now
    {
      CallBoundary inner;  // the driver API running the runtime's call: part of the outer call
      nested_done = true;
    }
  });
  while (!inside) std::this_thread::sleep_for(1ms);
  std::thread mover([&] {
    MoveGate::mark_mover_thread();
    EXPECT_TRUE(MoveGate::stop_calls(5s));  // waits for the outer call, which its nested call does not hold up
    EXPECT_TRUE(nested_done);
    CallBoundary own;  // the mover's own calls pass the closed gate
    MoveGate::reopen();
  });
  mover.join();
  app.join();
}
