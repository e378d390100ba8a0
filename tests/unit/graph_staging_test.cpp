// Staging blocks for graph copies of pageable memory: sizes, carving from
// slabs, reuse of blocks given back, large blocks on slabs of their own.
#include "client/graph/staging_blocks.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using rgpu::client::StagingBlock;
using rgpu::client::StagingBlocks;

namespace {

// Slabs from the heap, each remembered with its size.
struct Slabs {
  std::vector<std::unique_ptr<char[]>> memory;
  std::vector<size_t> sizes;
  bool fail = false;
  StagingBlocks::SlabSource source() {
    return [this](size_t bytes) -> char* {
      if (fail) return nullptr;
      memory.push_back(std::make_unique<char[]>(bytes));
      sizes.push_back(bytes);
      return memory.back().get();
    };
  }
};

TEST(GraphStagingTest, SmallBlocksComeRoundedUpFromOneSlab) {
  Slabs slabs;
  StagingBlocks blocks(slabs.source());
  StagingBlock a = blocks.take(8), b = blocks.take(3000), c = blocks.take(0);
  EXPECT_EQ(a.size, StagingBlocks::kMinBlock);
  EXPECT_EQ(b.size, 4096u);
  EXPECT_EQ(c.size, StagingBlocks::kMinBlock);
  ASSERT_EQ(slabs.sizes.size(), 1u);
  EXPECT_EQ(slabs.sizes[0], StagingBlocks::kSlabBytes);
  // Apart, inside the slab.
  char* slab = slabs.memory[0].get();
  EXPECT_EQ(a.base, slab);
  EXPECT_EQ(b.base, slab + a.size);
  EXPECT_EQ(c.base, b.base + b.size);
}

TEST(GraphStagingTest, ABlockGivenBackServesTheNextOfItsSize) {
  Slabs slabs;
  StagingBlocks blocks(slabs.source());
  StagingBlock a = blocks.take(1000);
  blocks.give_back(a);
  StagingBlock other_size = blocks.take(5000);
  EXPECT_NE(other_size.base, a.base);
  StagingBlock same = blocks.take(600);  // rounds to a's size
  EXPECT_EQ(same.base, a.base);
  EXPECT_EQ(same.size, a.size);
  EXPECT_EQ(slabs.sizes.size(), 1u);
}

TEST(GraphStagingTest, AFullSlabGivesWayToANewOne) {
  Slabs slabs;
  StagingBlocks blocks(slabs.source());
  for (size_t i = 0; i < StagingBlocks::kSlabBytes / StagingBlocks::kMaxCarved; ++i)
    EXPECT_TRUE(blocks.take(StagingBlocks::kMaxCarved).base);
  EXPECT_EQ(slabs.sizes.size(), 1u);
  StagingBlock next = blocks.take(1);
  ASSERT_EQ(slabs.sizes.size(), 2u);
  EXPECT_EQ(next.base, slabs.memory[1].get());
}

TEST(GraphStagingTest, LargeBlocksHaveSlabsOfTheirOwnAndAreReused) {
  Slabs slabs;
  StagingBlocks blocks(slabs.source());
  StagingBlock big = blocks.take(StagingBlocks::kMaxCarved + 1);
  ASSERT_EQ(slabs.sizes.size(), 1u);
  EXPECT_EQ(slabs.sizes[0], 2 * StagingBlocks::kMaxCarved);
  EXPECT_EQ(big.size, 2 * StagingBlocks::kMaxCarved);
  blocks.give_back(big);
  EXPECT_EQ(blocks.take(StagingBlocks::kMaxCarved + 100).base, big.base);
  EXPECT_EQ(slabs.sizes.size(), 1u);
}

TEST(GraphStagingTest, NoMemoryIsANullBlock) {
  Slabs slabs;
  slabs.fail = true;
  StagingBlocks blocks(slabs.source());
  EXPECT_EQ(blocks.take(10).base, nullptr);
  EXPECT_EQ(blocks.take(StagingBlocks::kSlabBytes).base, nullptr);
  blocks.give_back({});  // nothing to keep
  slabs.fail = false;
  EXPECT_EQ(blocks.take(StagingBlocks::kMaxBlock + 1).base, nullptr);  // never asked for
  EXPECT_TRUE(slabs.sizes.empty());
  EXPECT_NE(blocks.take(10).base, nullptr);
}

}  // namespace

// After a device reset the server's slabs are gone: nothing of them is
// handed out again, not even a block taken before and given back after.
TEST(GraphStagingTest, ForgottenSlabsServeNoMoreBlocks) {
  Slabs slabs;
  StagingBlocks blocks(slabs.source());
  StagingBlock held = blocks.take(1000), freed = blocks.take(1000);
  blocks.give_back(freed);
  blocks.forget();
  blocks.give_back(held);
  StagingBlock next = blocks.take(1000), again = blocks.take(1000);
  ASSERT_EQ(slabs.sizes.size(), 2u);
  char* fresh = slabs.memory[1].get();
  EXPECT_EQ(next.base, fresh);
  EXPECT_EQ(again.base, fresh + next.size);
}
