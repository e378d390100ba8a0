// The session's limits: device memory (SessionQuota, max-session-memory)
// and page-locked host memory (MemoryLimit, max-session-host-memory).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

#include "server/pool/session_quota.hpp"
#include "server/pool/memory_limit.hpp"

using rgpu::server::MemoryLimit;
using rgpu::server::SessionQuota;

// Sizes below are in blocks of the allocation granularity.
constexpr uint64_t kBlock = rgpu::server::kDeviceAllocationGranularity;

namespace {

// Allocates `bytes`, the allocation naming itself `name`.
int32_t allocate(SessionQuota& q, uint64_t bytes, uint64_t name, int gpu = 0,
                 SessionQuota::Kind kind = SessionQuota::Kind::memory) {
  uint64_t made = 0;
  return q.allocate(gpu, bytes, kind, &made, [&] {
    made = name;
    return int32_t{cudaSuccess};
  });
}

}  // namespace

TEST(SessionQuota, RefusesPastTheLimitWithoutALedgerAndRunsNothing) {
  SessionQuota q(nullptr, getpid());
  q.set_limit(1000 * kBlock);
  EXPECT_EQ(allocate(q, 600 * kBlock, 0x10), cudaSuccess);
  int runs = 0;
  uint64_t made = 0;
  EXPECT_EQ(q.allocate(0, 401 * kBlock, SessionQuota::Kind::memory, &made,
                       [&] { return ++runs, int32_t{cudaSuccess}; }),
            cudaErrorMemoryAllocation);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(allocate(q, ~0ull, 0x20), cudaErrorMemoryAllocation);  // no wrap past the limit
  EXPECT_EQ(allocate(q, 400 * kBlock, 0x20, 0, SessionQuota::Kind::array), cudaSuccess);  // every kind counts
  EXPECT_EQ(allocate(q, 1, 0x30), cudaErrorMemoryAllocation);
}

TEST(SessionQuota, FreesResetsAndFailuresGiveTheBytesBack) {
  SessionQuota q(nullptr, getpid());
  q.set_limit(1000 * kBlock);
  ASSERT_EQ(allocate(q, 1000 * kBlock, 0x10), cudaSuccess);
  q.freed(SessionQuota::Kind::vmm, 0x10);  // another kind's name: not this one
  EXPECT_EQ(allocate(q, 1, 0x20), cudaErrorMemoryAllocation);
  q.freed(SessionQuota::Kind::memory, 0x10);
  EXPECT_EQ(allocate(q, 1000 * kBlock, 0x20, 1), cudaSuccess);
  q.reset(0);  // another GPU's reset leaves GPU 1's charge
  EXPECT_EQ(allocate(q, 1, 0x30), cudaErrorMemoryAllocation);
  q.reset(1);
  // A failed allocation, and one that made nothing (size 0), keep nothing.
  uint64_t made = 0;
  EXPECT_EQ(q.allocate(0, 1000 * kBlock, SessionQuota::Kind::memory, &made,
                       [] { return int32_t{cudaErrorInvalidValue}; }),
            cudaErrorInvalidValue);
  EXPECT_EQ(allocate(q, 1000 * kBlock, 0), cudaSuccess);
  EXPECT_EQ(allocate(q, 1000 * kBlock, 0x40), cudaSuccess);
}

TEST(SessionQuota, ViewBoundsTheGpusMemoryByWhatIsLeftOfTheLimit) {
  SessionQuota q(nullptr, getpid());
  size_t free = 5000 * kBlock, total = 8000 * kBlock;
  q.view(0, &free, &total);  // no limit: the GPU's own figures
  EXPECT_EQ(free, 5000 * kBlock);
  EXPECT_EQ(total, 8000 * kBlock);
  q.set_limit(1000 * kBlock);
  ASSERT_EQ(allocate(q, 600 * kBlock, 0x10), cudaSuccess);
  q.view(0, &free, &total);
  EXPECT_EQ(free, 400 * kBlock);
  EXPECT_EQ(total, 1000 * kBlock);
}

// Many threads allocate at once, each while the others are between the
// check and the allocation: exactly as many as fit pass.
TEST(SessionQuota, ThreadsRacingCannotTogetherPassTheLimit) {
  constexpr int kThreads = 8;
  SessionQuota q(nullptr, getpid());
  q.set_limit(3 * 100 * kBlock);
  std::barrier start(kThreads);
  std::atomic<int> passed{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      uint64_t made = 0;
      int32_t e = q.allocate(0, 100 * kBlock, SessionQuota::Kind::memory, &made, [&] {
        // Held long enough that every other thread checks meanwhile.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        made = 0x1000 + i;
        return int32_t{cudaSuccess};
      });
      ++(e == cudaSuccess ? passed : refused);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(passed, 3);
  EXPECT_EQ(refused, kThreads - 3);
}

// Allocations count as the GPU holds them, in blocks of the granularity.
TEST(SessionQuota, SmallAllocationsCountAtTheGranularity) {
  SessionQuota q(nullptr, getpid());
  q.set_limit(4 * kBlock);
  for (uint64_t i = 1; i <= 4; ++i) EXPECT_EQ(allocate(q, 1, i), cudaSuccess);
  EXPECT_EQ(allocate(q, 1, 5), cudaErrorMemoryAllocation);
  q.freed(SessionQuota::Kind::memory, 1);
  EXPECT_EQ(allocate(q, kBlock + 1, 6), cudaErrorMemoryAllocation);  // two blocks
  EXPECT_EQ(allocate(q, kBlock, 6), cudaSuccess);
}

// Past 1 MiB the GPU takes whole 2 MiB pages.
TEST(SessionQuota, LargeAllocationsCountInWholePages) {
  SessionQuota q(nullptr, getpid());
  constexpr uint64_t kPage = rgpu::server::kLargeAllocationGranularity;
  q.set_limit(3 * kPage);
  EXPECT_EQ(allocate(q, rgpu::server::kLargeAllocationThreshold + 1, 1), cudaSuccess);  // one page
  EXPECT_EQ(allocate(q, 2 * kPage + 1, 2), cudaErrorMemoryAllocation);                  // three more
  EXPECT_EQ(allocate(q, kPage, 3), cudaSuccess);
  EXPECT_EQ(allocate(q, kPage, 4), cudaSuccess);
  EXPECT_EQ(allocate(q, 1, 5), cudaErrorMemoryAllocation);
}

// The count of allocations is bounded apart from their bytes; a freed one
// makes room.
TEST(SessionQuota, CountLimitRefusesPastItAndRunsNothing) {
  SessionQuota q(nullptr, getpid());
  q.set_count_limit(3);
  for (uint64_t i = 1; i <= 3; ++i) EXPECT_EQ(allocate(q, 1, i), cudaSuccess);
  int runs = 0;
  uint64_t made = 0;
  EXPECT_EQ(q.allocate(0, 1, SessionQuota::Kind::memory, &made, [&] { return ++runs, int32_t{cudaSuccess}; }),
            cudaErrorMemoryAllocation);
  EXPECT_EQ(runs, 0);
  q.freed(SessionQuota::Kind::memory, 2);
  EXPECT_EQ(allocate(q, 1, 4), cudaSuccess);
}

TEST(MemoryLimit, HoldsWithinTheLimitAndTakesBackWhatIsGiven) {
  MemoryLimit l("max-session-host-memory");
  l.set_limit(1000);
  EXPECT_TRUE(l.hold(600, "test"));
  EXPECT_FALSE(l.hold(401, "test"));
  EXPECT_FALSE(l.hold(~0ull, "test"));
  EXPECT_TRUE(l.hold(400, "test"));
  l.give_back(600);
  EXPECT_TRUE(l.hold(600, "test"));
  MemoryLimit none("max-session-host-memory");
  EXPECT_TRUE(none.hold(~0ull, "test"));
}
