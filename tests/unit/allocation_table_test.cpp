#include <gtest/gtest.h>

#include "client/core/memory_map.hpp"
#include "server/worker/allocation_table.hpp"

using rgpu::server::AllocationTable;

TEST(AllocationTable, ContainsOnlyRangesInsideOneAllocation) {
  AllocationTable t;
  t.add(0x1000, 0x100);
  t.add(0x1100, 0x100);
  EXPECT_TRUE(t.contains(0x1000, 0x100));
  EXPECT_TRUE(t.contains(0x10ff, 1));
  EXPECT_FALSE(t.contains(0x10ff, 2));  // spans two allocations
  EXPECT_FALSE(t.contains(0x0fff, 1));
  EXPECT_FALSE(t.contains(0x1200, 1));
  EXPECT_FALSE(t.contains(0x1000, ~size_t{0}));  // no overflow
}

TEST(AllocationTable, RemoveOnlyAtBase) {
  AllocationTable t;
  t.add(0x1000, 0x100);
  EXPECT_EQ(t.remove(0x1010), 0u);
  EXPECT_EQ(t.remove(0x1000), 0x100u);
  EXPECT_FALSE(t.contains(0x1000, 1));
}

TEST(MemoryMap, FindsOwningDeviceAndForgetsResetDevices) {
  auto& m = rgpu::client::MemoryMap::get();
  m.add_device(0x7000, 0x100, 1);
  m.add_device(0x9000, 0x100, 0);
  auto r = m.find_device(0x7080, 0x80);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device, 1);
  EXPECT_FALSE(m.find_device(0x7080, 0x81));
  m.forget_device(1);
  EXPECT_FALSE(m.find_device(0x7000));
  EXPECT_TRUE(m.find_device(0x9000));
  m.remove_device(0x9000);
}

TEST(MemoryMap, RefusesAddressesAnotherDeviceAlreadyUses) {
  auto& m = rgpu::client::MemoryMap::get();
  ASSERT_TRUE(m.add_device(0x10000, 0x1000, 0));
  EXPECT_FALSE(m.add_device(0x10000, 0x10, 1));   // same base
  EXPECT_FALSE(m.add_device(0x0ff00, 0x200, 1));  // runs into it
  EXPECT_FALSE(m.add_device(0x10ff0, 0x100, 1));  // starts inside
  EXPECT_TRUE(m.add_device(0x11000, 0x100, 1));   // adjacent is fine
  EXPECT_EQ(m.find_device(0x10010)->device, 0);
  m.remove_device(0x10000);
  m.remove_device(0x11000);
}
