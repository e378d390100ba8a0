#include "server/worker/vmm_table.hpp"

#include <gtest/gtest.h>

using rgpu::server::VmmTable;

namespace {

constexpr uint64_t kBase = 0x100000;
constexpr size_t kG = 0x10000;

TEST(VmmTable, MapsOnlyInsideReservationsAndNeverOverlapping) {
  VmmTable t;
  EXPECT_FALSE(t.can_map(kBase, kG));  // nothing reserved
  t.add_reservation(kBase, 4 * kG);
  EXPECT_TRUE(t.can_map(kBase, kG));
  EXPECT_TRUE(t.can_map(kBase + 3 * kG, kG));
  EXPECT_FALSE(t.can_map(kBase + 3 * kG, 2 * kG));  // runs past the end
  EXPECT_FALSE(t.can_map(kBase - kG, kG));
  EXPECT_FALSE(t.can_map(kBase, 0));
  t.add_mapping({kBase + kG, kG, 7});
  EXPECT_FALSE(t.can_map(kBase + kG, kG));
  EXPECT_FALSE(t.can_map(kBase, 2 * kG));          // reaches into it
  EXPECT_FALSE(t.can_map(kBase + kG + 1, kG - 1));  // starts inside it
  EXPECT_TRUE(t.can_map(kBase, kG));
  EXPECT_TRUE(t.can_map(kBase + 2 * kG, 2 * kG));
}

TEST(VmmTable, RangesMustTileWholeMappings) {
  VmmTable t;
  t.add_reservation(kBase, 4 * kG);
  t.add_mapping({kBase, kG, 1});
  t.add_mapping({kBase + kG, 2 * kG, 2});
  auto both = t.mappings_in(kBase, 3 * kG);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->size(), 2u);
  EXPECT_FALSE(t.mappings_in(kBase, 2 * kG));      // cuts the second
  EXPECT_FALSE(t.mappings_in(kBase, 4 * kG));      // a hole at the end
  EXPECT_FALSE(t.mappings_in(kBase + 1, kG));      // not at a mapping's start
  EXPECT_FALSE(t.remove_reservation(kBase, 4 * kG));  // still mapped
  t.remove_mapping(kBase);
  t.remove_mapping(kBase + kG);
  EXPECT_FALSE(t.remove_reservation(kBase, 2 * kG));  // not its size
  EXPECT_TRUE(t.remove_reservation(kBase, 4 * kG));
}

TEST(VmmTable, AllocationsAndAccessRanges) {
  VmmTable t;
  t.add_allocation(5, kG);
  EXPECT_EQ(t.allocation_size(5), kG);
  EXPECT_FALSE(t.allocation_size(6));
  EXPECT_TRUE(t.remove_allocation(5));
  EXPECT_FALSE(t.remove_allocation(5));
  t.add_access(kBase, kG);
  t.add_access(kBase + 4 * kG, kG);
  EXPECT_TRUE(t.take_access(kBase + kG, 3 * kG, false).empty());  // touches both, overlaps none
  auto touching = t.take_access(kBase + 2 * kG, kG, true);
  EXPECT_TRUE(touching.empty());  // a gap on either side
  touching = t.take_access(kBase + kG, 3 * kG, true);
  EXPECT_EQ(touching.size(), 2u);
  t.add_access(kBase, kG);
  t.add_access(kBase + 4 * kG, kG);
  auto taken = t.take_access(kBase + kG / 2, 4 * kG, false);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0], std::make_pair(kBase, kG));
  EXPECT_TRUE(t.take_access(kBase, 8 * kG, false).empty());
}

}  // namespace
