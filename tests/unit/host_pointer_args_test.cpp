// The kernel argument scan: 8-byte-aligned words of packed parameters that
// point into page-locked memory the GPU cannot reach have their allocation
// promoted (or, promoted already, reached) and are rewritten to its device
// address.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "client/core/kernel_launch.hpp"
#include "client/core/memory_map.hpp"

using rgpu::client::HostRange;
using rgpu::client::MemoryMap;
using rgpu::client::reach_host_pointer_args;

namespace {

constexpr uint64_t kHost = 0x7f0000000000;
constexpr uint64_t kDevice = 0x300000000;
constexpr size_t kSize = 0x10000;

struct Promotion {
  uint64_t base;
  int device;
};
std::vector<Promotion> g_promotions;
int g_reached_promoted = 0;
cudaError_t g_promote_result = cudaSuccess;

// Promotes to a new address; memory promoted already is reached where it is.
cudaError_t record_reach(const HostRange& range, int device, uint64_t* device_address) {
  if (range.device_address) {
    ++g_reached_promoted;
    *device_address = range.device_address;
    return cudaSuccess;
  }
  g_promotions.push_back({range.base, device});
  *device_address = kDevice + g_promotions.size() * 0x100000;
  return g_promote_result;
}

std::vector<uint8_t> words(std::initializer_list<uint64_t> values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  size_t i = 0;
  for (uint64_t v : values) std::memcpy(bytes.data() + 8 * i++, &v, 8);
  return bytes;
}

uint64_t word_at(const std::vector<uint8_t>& bytes, size_t offset) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + offset, 8);
  return v;
}

class HostPointerArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_promotions.clear();
    g_reached_promoted = 0;
    g_promote_result = cudaSuccess;
    rgpu::client::set_page_locked_reach(record_reach);
  }
  void TearDown() override { rgpu::client::set_page_locked_reach(nullptr); }
  MemoryMap map;
};

TEST_F(HostPointerArgsTest, WithoutPageLockedMemoryNothingIsScanned) {
  auto packed = words({kHost, 42});
  const auto before = packed;
  EXPECT_EQ(cudaSuccess, reach_host_pointer_args(map, &packed, 0, false));
  EXPECT_EQ(packed, before);
  EXPECT_TRUE(g_promotions.empty());
}

TEST_F(HostPointerArgsTest, PointersIntoUnreachableMemoryPromoteItOnceAndAreRewritten) {
  map.add_host({kHost, kSize, 0, false, -1});
  // Two pointers into the allocation, a number, one pointer past its end.
  auto packed = words({kHost + 0x10, 7, kHost + kSize - 1, kHost + kSize});
  ASSERT_EQ(cudaSuccess, reach_host_pointer_args(map, &packed, 1, false));
  ASSERT_EQ(g_promotions.size(), 1u);
  EXPECT_EQ(g_promotions[0].base, kHost);
  EXPECT_EQ(g_promotions[0].device, 1);
  const uint64_t device = kDevice + 0x100000;
  EXPECT_EQ(word_at(packed, 0), device + 0x10);
  EXPECT_EQ(word_at(packed, 8), 7u);
  EXPECT_EQ(word_at(packed, 16), device + kSize - 1);
  EXPECT_EQ(word_at(packed, 24), kHost + kSize);
}

TEST_F(HostPointerArgsTest, PointersInsideStructuresAreFoundButOnlyAtEightByteAlignment) {
  map.add_host({kHost, kSize, 0, false, -1});
  // A 4-byte field then a pointer (a structure's layout), and a pointer's
  // bytes straddling two words, which no pointer parameter can be.
  std::vector<uint8_t> packed(32, 0);
  uint64_t p = kHost + 8;
  std::memcpy(packed.data() + 8, &p, 8);
  std::memcpy(packed.data() + 20, &p, 8);
  const auto straddling = word_at(packed, 16);
  ASSERT_EQ(cudaSuccess, reach_host_pointer_args(map, &packed, 0, false));
  EXPECT_EQ(word_at(packed, 8), kDevice + 0x100000 + 8);
  EXPECT_EQ(word_at(packed, 16), straddling);
  EXPECT_EQ(g_promotions.size(), 1u);
}

TEST_F(HostPointerArgsTest, MemoryTheServerMapsIsLeftAlone) {
  map.add_host({kHost, kSize, 0, false, /*shared_fd=*/5});
  auto packed = words({kHost});
  EXPECT_EQ(cudaSuccess, reach_host_pointer_args(map, &packed, 0, true));
  EXPECT_EQ(word_at(packed, 0), kHost);
  EXPECT_TRUE(g_promotions.empty());
  // For a server that does not share it, it cannot be remapped under the one that does.
  EXPECT_EQ(cudaErrorNotSupported, reach_host_pointer_args(map, &packed, 0, false));
  EXPECT_TRUE(g_promotions.empty());
}

TEST_F(HostPointerArgsTest, RegisteredMemoryIsRefused) {
  map.add_host({kHost, kSize, 0, /*registered=*/true, -1});
  auto packed = words({kHost});
  EXPECT_EQ(cudaErrorNotSupported, reach_host_pointer_args(map, &packed, 0, true));
  EXPECT_EQ(word_at(packed, 0), kHost);
  EXPECT_TRUE(g_promotions.empty());
}

TEST_F(HostPointerArgsTest, PromotedMemoryIsRewrittenAndCoherentMemoryAtItsOwnAddressIsNot) {
  HostRange promoted{kHost, kSize, 0, false, -1, true, kDevice};
  map.add_host(promoted);
  HostRange mapped{kHost + 0x100000, kSize, 0, false, -1, true};
  map.add_host(mapped);
  auto packed = words({kHost + 4, kHost + 0x100000 + 4, kHost + 8});
  ASSERT_EQ(cudaSuccess, reach_host_pointer_args(map, &packed, 0, false));
  EXPECT_EQ(word_at(packed, 0), kDevice + 4);
  EXPECT_EQ(word_at(packed, 8), kHost + 0x100000 + 4);
  EXPECT_EQ(word_at(packed, 16), kDevice + 8);
  EXPECT_TRUE(g_promotions.empty());
  EXPECT_EQ(g_reached_promoted, 1);  // once per launch and allocation
}

TEST_F(HostPointerArgsTest, AFailedPromotionFailsTheLaunch) {
  map.add_host({kHost, kSize, 0, false, -1});
  g_promote_result = cudaErrorMemoryAllocation;
  auto packed = words({kHost});
  EXPECT_EQ(cudaErrorMemoryAllocation, reach_host_pointer_args(map, &packed, 0, false));
}

}  // namespace
