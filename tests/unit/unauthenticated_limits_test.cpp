// The daemon's bounds on connections not yet authenticated
// (unauthenticated_limits.hpp), driven without processes.
#include <gtest/gtest.h>

#include "server/daemon/unauthenticated_limits.hpp"

using rgpu::server::UnauthenticatedLimits;
using namespace std::chrono_literals;

namespace {

UnauthenticatedLimits::Bounds bounds(size_t per_source, size_t total) {
  UnauthenticatedLimits::Bounds b;
  b.per_source = per_source;
  b.total = total;
  b.hello_timeout = 5s;
  b.grace = 1s;
  return b;
}

TEST(UnauthenticatedLimits, OneSourceGetsItsBoundInHelloAndAsManyQueued) {
  UnauthenticatedLimits limits(bounds(2, 100));
  const auto t = UnauthenticatedLimits::Clock::now();
  UnauthenticatedLimits::Id ids[5];
  for (int i = 0; i < 4; ++i) ASSERT_EQ(limits.accept("host a", t, &ids[i]), UnauthenticatedLimits::Verdict::queued);
  EXPECT_EQ(limits.accept("host a", t, &ids[4]), UnauthenticatedLimits::Verdict::over_source_bound);
  EXPECT_EQ(limits.dispatchable(), 2u);
  for (int i = 0; i < 2; ++i) {
    auto next = limits.next_to_dispatch();
    ASSERT_TRUE(next);
    EXPECT_EQ(*next, ids[i]);  // oldest first
    limits.dispatched(*next, t);
  }
  EXPECT_EQ(limits.in_hello_of("host a"), 2u);
  EXPECT_FALSE(limits.next_to_dispatch());  // its two in hello hold the rest back
  EXPECT_EQ(limits.dispatchable(), 0u);
  // Two in hello and two waiting: that source has all it may.
  UnauthenticatedLimits::Id more;
  EXPECT_EQ(limits.accept("host a", t, &more), UnauthenticatedLimits::Verdict::over_source_bound);
  limits.finished(ids[0]);  // admitted
  EXPECT_EQ(*limits.next_to_dispatch(), ids[2]);
}

TEST(UnauthenticatedLimits, AnotherSourceIsNotHeldBackByAFlood) {
  UnauthenticatedLimits limits(bounds(2, 100));
  const auto t = UnauthenticatedLimits::Clock::now();
  UnauthenticatedLimits::Id id;
  for (int i = 0; i < 4; ++i) limits.accept("host flood", t, &id);
  limits.dispatched(*limits.next_to_dispatch(), t);
  limits.dispatched(*limits.next_to_dispatch(), t);
  UnauthenticatedLimits::Id good;
  ASSERT_EQ(limits.accept("host good", t, &good), UnauthenticatedLimits::Verdict::queued);
  EXPECT_EQ(limits.next_to_dispatch(), good);
}

TEST(UnauthenticatedLimits, TotalBoundCountsEverySource) {
  UnauthenticatedLimits limits(bounds(16, 3));
  const auto t = UnauthenticatedLimits::Clock::now();
  UnauthenticatedLimits::Id id;
  EXPECT_EQ(limits.accept("a", t, &id), UnauthenticatedLimits::Verdict::queued);
  limits.dispatched(id, t);
  EXPECT_EQ(limits.accept("b", t, &id), UnauthenticatedLimits::Verdict::queued);
  EXPECT_EQ(limits.accept("c", t, &id), UnauthenticatedLimits::Verdict::queued);
  EXPECT_EQ(limits.accept("d", t, &id), UnauthenticatedLimits::Verdict::over_total_bound);
  limits.finished(id);
  EXPECT_EQ(limits.accept("d", t, &id), UnauthenticatedLimits::Verdict::queued);
}

TEST(UnauthenticatedLimits, DeadlinesExpireQueuedAndOverdueConnections) {
  UnauthenticatedLimits limits(bounds(1, 10));
  const auto t = UnauthenticatedLimits::Clock::now();
  UnauthenticatedLimits::Id queued, in_hello;
  limits.accept("a", t, &in_hello);
  limits.dispatched(in_hello, t + 2s);
  limits.accept("a", t + 1s, &queued);
  EXPECT_TRUE(limits.expired_in_queue(t + 5s).empty());
  EXPECT_EQ(limits.expired_in_queue(t + 6s), std::vector<UnauthenticatedLimits::Id>{queued});
  // In hello: its worker has the deadline from hand-off, and a grace.
  EXPECT_TRUE(limits.overdue_in_hello(t + 7s).empty());
  EXPECT_EQ(limits.overdue_in_hello(t + 8s), std::vector<UnauthenticatedLimits::Id>{in_hello});
  limits.finished(queued);
  // One that only waits for a worker to start is not closed.
  UnauthenticatedLimits::Id waiting;
  limits.accept("b", t, &waiting);
  EXPECT_TRUE(limits.expired_in_queue(t + 60s).empty());
  limits.finished(waiting);
  limits.finished(in_hello);
  limits.finished(in_hello);  // twice: ignored
  EXPECT_EQ(limits.queued(), 0u);
  EXPECT_EQ(limits.in_hello(), 0u);
}

}  // namespace
