// FunctionAttributeCache: kept answers, what forgets them, and threads.
#include "client/core/function_attribute_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using rgpu::client::FunctionAttributeCache;
using rgpu::client::OccupancyQuery;

namespace {

// A server stand-in: counts the questions and answers with its current value.
struct Server {
  int asked = 0;
  int value = 1;
  cudaError_t error = cudaSuccess;
  auto attributes() {
    return [this](cudaFuncAttributes* a) {
      ++asked;
      if (error) return error;
      *a = cudaFuncAttributes{};
      a->maxDynamicSharedSizeBytes = value;
      return cudaSuccess;
    };
  }
  auto occupancy() {
    return [this](int* blocks) {
      ++asked;
      if (error) return error;
      *blocks = value;
      return cudaSuccess;
    };
  }
};

int shared_bytes(FunctionAttributeCache& cache, Server& server, int device, uint64_t function) {
  cudaFuncAttributes a{};
  EXPECT_EQ(cache.attributes(device, function, &a, server.attributes()), cudaSuccess);
  return a.maxDynamicSharedSizeBytes;
}

int blocks(FunctionAttributeCache& cache, Server& server, int device, uint64_t function, OccupancyQuery q) {
  int n = -1;
  EXPECT_EQ(cache.occupancy(device, function, q, &n, server.occupancy()), cudaSuccess);
  return n;
}

TEST(FunctionAttributeCache, AsksOnceThenAnswersItself) {
  FunctionAttributeCache cache;
  Server server;
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 1);
  server.value = 2;  // unseen: nothing told the cache
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 1);
  EXPECT_EQ(server.asked, 1);
}

TEST(FunctionAttributeCache, SeparatesFunctionsAndDevices) {
  FunctionAttributeCache cache;
  Server server;
  // The same server handle on another device is another kernel.
  const struct {
    int device;
    uint64_t function;
  } kernels[] = {{0, 0x100}, {1, 0x100}, {0, 0x200}};
  for (int i = 0; i < 3; ++i) {
    server.value = i + 1;
    EXPECT_EQ(shared_bytes(cache, server, kernels[i].device, kernels[i].function), i + 1);
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(shared_bytes(cache, server, kernels[i].device, kernels[i].function), i + 1);
  EXPECT_EQ(server.asked, 3);
}

TEST(FunctionAttributeCache, KeepsNoErrors) {
  FunctionAttributeCache cache;
  Server server;
  server.error = cudaErrorInvalidDeviceFunction;
  cudaFuncAttributes a{};
  EXPECT_EQ(cache.attributes(0, 0x100, &a, server.attributes()), cudaErrorInvalidDeviceFunction);
  int n;
  EXPECT_EQ(cache.occupancy(0, 0x100, {128, 0, 0}, &n, server.occupancy()), cudaErrorInvalidDeviceFunction);
  server.error = cudaSuccess;
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 1);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {128, 0, 0}), 1);
  EXPECT_EQ(server.asked, 4);
}

TEST(FunctionAttributeCache, OccupancyIsKeptPerQuery) {
  FunctionAttributeCache cache;
  Server server;
  const OccupancyQuery base{256, 1024, 0};
  EXPECT_EQ(blocks(cache, server, 0, 0x100, base), 1);
  server.value = 2;
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {128, 1024, 0}), 2);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {256, 2048, 0}), 2);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {256, 1024, 1}), 2);
  EXPECT_EQ(server.asked, 4);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, base), 1);
  EXPECT_EQ(server.asked, 4);
  // Attributes and occupancy of one kernel are kept side by side.
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 2);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, base), 1);
  EXPECT_EQ(server.asked, 5);
}

TEST(FunctionAttributeCache, OccupancyAnswersAreBounded) {
  FunctionAttributeCache cache;
  Server server;
  const size_t n = FunctionAttributeCache::kOccupancyAnswersPerFunction;
  for (size_t i = 0; i <= n; ++i) blocks(cache, server, 0, 0x100, {32, i, 0});
  EXPECT_EQ(server.asked, static_cast<int>(n + 1));
  blocks(cache, server, 0, 0x100, {32, n, 0});  // newest: kept
  EXPECT_EQ(server.asked, static_cast<int>(n + 1));
  blocks(cache, server, 0, 0x100, {32, 0, 0});  // oldest: gone
  EXPECT_EQ(server.asked, static_cast<int>(n + 2));
}

TEST(FunctionAttributeCache, ForgettingAFunctionLeavesTheOthers) {
  FunctionAttributeCache cache;
  Server server;
  shared_bytes(cache, server, 0, 0x100);
  shared_bytes(cache, server, 1, 0x100);
  shared_bytes(cache, server, 0, 0x200);
  blocks(cache, server, 0, 0x100, {64, 0, 0});
  server.value = 7;
  cache.forget_function(0, 0x100);
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 7);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {64, 0, 0}), 7);
  EXPECT_EQ(shared_bytes(cache, server, 1, 0x100), 1);
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x200), 1);
  EXPECT_EQ(server.asked, 6);
}

TEST(FunctionAttributeCache, ForgettingADeviceLeavesTheOthers) {
  FunctionAttributeCache cache;
  Server server;
  shared_bytes(cache, server, 0, 0x100);
  shared_bytes(cache, server, 0, 0x200);
  blocks(cache, server, 0, 0x200, {64, 0, 0});
  shared_bytes(cache, server, 1, 0x100);
  server.value = 7;
  cache.forget_device(0);
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 7);
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x200), 7);
  EXPECT_EQ(blocks(cache, server, 0, 0x200, {64, 0, 0}), 7);
  EXPECT_EQ(shared_bytes(cache, server, 1, 0x100), 1);
  EXPECT_EQ(server.asked, 7);
}

// An answer fetched across a forget may be the old one: it is handed to the
// caller but not kept.
TEST(FunctionAttributeCache, AnswerFetchedAcrossAForgetIsNotKept) {
  FunctionAttributeCache cache;
  Server server;
  cudaFuncAttributes a{};
  EXPECT_EQ(cache.attributes(0, 0x100, &a,
                             [&](cudaFuncAttributes* out) {
                               cudaError_t e = server.attributes()(out);
                               server.value = 2;  // a setter runs while the answer travels...
                               cache.forget_function(0, 0x100);  // ...and returns first
                               return e;
                             }),
            cudaSuccess);
  EXPECT_EQ(a.maxDynamicSharedSizeBytes, 1);
  EXPECT_EQ(shared_bytes(cache, server, 0, 0x100), 2);
  int n = -1;
  EXPECT_EQ(cache.occupancy(0, 0x100, {32, 0, 0}, &n,
                            [&](int* out) {
                              cudaError_t e = server.occupancy()(out);
                              server.value = 3;
                              cache.forget_device(0);
                              return e;
                            }),
            cudaSuccess);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(blocks(cache, server, 0, 0x100, {32, 0, 0}), 3);
}

// Threads asking, fetching and forgetting at once (run under TSan by
// tools/sanitize.sh): every answer is one the server gave for that kernel,
// and after the last forget the current value is seen.
TEST(FunctionAttributeCache, ThreadsAskAndForgetAtOnce) {
  FunctionAttributeCache cache;
  std::atomic<int> value{0};
  std::atomic<int> fetches{0};
  std::atomic<bool> wrong{false};
  constexpr int kFunctions = 8;
  auto worker = [&](int seed) {
    for (int i = 0; i < 2000; ++i) {
      uint64_t function = 0x100 * (1 + (i + seed) % kFunctions);
      int device = (i / kFunctions + seed) % 2;
      cudaFuncAttributes a{};
      cache.attributes(device, function, &a, [&](cudaFuncAttributes* out) {
        ++fetches;
        *out = cudaFuncAttributes{};
        out->numRegs = static_cast<int>(function);
        out->maxDynamicSharedSizeBytes = value.load();
        return cudaSuccess;
      });
      int n = 0;
      cache.occupancy(device, function, {32 * (1 + i % 4), 0, 0}, &n, [&](int* out) {
        ++fetches;
        *out = static_cast<int>(function) + device;
        return cudaSuccess;
      });
      if (a.numRegs != static_cast<int>(function) || n != static_cast<int>(function) + device) wrong = true;
      if (i % 97 == seed) {
        ++value;
        if (i % 2) cache.forget_function(device, function);
        else cache.forget_device(device);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  EXPECT_FALSE(wrong);
  EXPECT_LT(fetches.load(), 4 * 2000 * 2);  // most were answered from the cache
  value = 1000;
  cache.forget_device(0);
  cudaFuncAttributes a{};
  cache.attributes(0, 0x100, &a, [&](cudaFuncAttributes* out) {
    out->maxDynamicSharedSizeBytes = value.load();
    return cudaSuccess;
  });
  EXPECT_EQ(a.maxDynamicSharedSizeBytes, 1000);
}

}  // namespace
