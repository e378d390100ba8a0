// The client's memory map: graph allocations' ranges, whose lifetime the
// client sees only through graph destruction and frees; module variables a
// session move loaded elsewhere, whose old address the application holds.
#include "client/core/memory_map.hpp"

#include <gtest/gtest.h>

using rgpu::client::MemoryMap;

namespace {

constexpr uint64_t kGraph = 0x1000;
constexpr uint64_t kOtherGraph = 0x2000;

TEST(MemoryMapTest, GraphMemoryIsDeviceMemoryTheApplicationMayFree) {
  MemoryMap m;
  ASSERT_TRUE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
  auto r = m.find_device(0x10080, 0x10);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device, 0);
  EXPECT_TRUE(r->graph_memory);
  ASSERT_TRUE(m.freeable(0x10000));
  EXPECT_FALSE(m.freeable(0x10080));  // not an allocation's start
  EXPECT_TRUE(m.remove_device(0x10000));
  EXPECT_FALSE(m.freeable(0x10000));  // freed once
}

TEST(MemoryMapTest, MemoryItsOwnGraphFreesIsTheGraphsAlone) {
  MemoryMap m;
  ASSERT_TRUE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
  m.graph_frees(0x10000, kOtherGraph);  // another graph's free node: still the application's to free
  EXPECT_TRUE(m.freeable(0x10000));
  m.graph_frees(0x10000, kGraph);
  EXPECT_FALSE(m.freeable(0x10000));
  EXPECT_TRUE(m.find_device(0x10000));  // still device memory while the graph exists
  m.graph_destroyed(kGraph);
  EXPECT_FALSE(m.find_device(0x10000));
}

TEST(MemoryMapTest, MemoryAGraphLeavesAllocatedOutlivesIt) {
  MemoryMap m;
  ASSERT_TRUE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
  m.graph_destroyed(kGraph);
  ASSERT_TRUE(m.freeable(0x10000));
  // A later graph with the same handle does not own it.
  m.graph_frees(0x10000, kGraph);
  EXPECT_TRUE(m.freeable(0x10000));
}

TEST(MemoryMapTest, ItsDeviceReusingAGraphAllocationsAddressProvesItGone) {
  MemoryMap m;
  ASSERT_TRUE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
  // Another device's memory there is ambiguous and refused, as for any allocation.
  EXPECT_FALSE(m.add_device(0x10080, 0x100, 1));
  ASSERT_TRUE(m.add_device(0x10080, 0x100, 0));
  EXPECT_FALSE(m.freeable(0x10000));
  auto r = m.find_device(0x10080);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->graph_memory);
  // Ordinary allocations are never evicted.
  EXPECT_FALSE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
}

TEST(MemoryMapTest, EachLaunchAllocatesAgainWhatTheApplicationFreed) {
  constexpr uint64_t kExec = 0x3000;
  MemoryMap m;
  ASSERT_TRUE(m.add_graph_memory(0x10000, 0x100, 0, kGraph));
  ASSERT_TRUE(m.add_graph_memory(0x20000, 0x100, 0, kGraph));
  m.graph_frees(0x20000, kGraph);  // the graph's own: not the application's after a launch
  m.graph_instantiated(kGraph, kExec);
  m.graph_launched(kExec);
  ASSERT_TRUE(m.freeable(0x10000));
  EXPECT_TRUE(m.remove_device(0x10000));
  EXPECT_FALSE(m.freeable(0x10000));
  m.graph_destroyed(kGraph);  // the executable graph still allocates it
  m.graph_launched(kExec);
  ASSERT_TRUE(m.freeable(0x10000));
  EXPECT_EQ(m.find_device(0x10080)->size, 0x100u);
  EXPECT_FALSE(m.find_device(0x20000));
  EXPECT_TRUE(m.remove_device(0x10000));
  m.exec_destroyed(kExec);
  m.graph_launched(kExec);
  EXPECT_FALSE(m.freeable(0x10000));
}

TEST(MemoryMapTest, PageLockedMemoryOutOfAGpusReachIsCounted) {
  using rgpu::client::HostRange;
  MemoryMap m;
  EXPECT_FALSE(m.may_hold_unreachable_host(false));
  m.add_host(HostRange{0x10000, 0x1000, 0, false, 5});  // shared with shm servers
  EXPECT_FALSE(m.may_hold_unreachable_host(true));
  EXPECT_TRUE(m.may_hold_unreachable_host(false));
  m.add_host(HostRange{0x20000, 0x1000, 0, false, -1, true});  // coherent: every GPU's
  m.remove_host(0x10000);
  EXPECT_FALSE(m.may_hold_unreachable_host(false));
  m.add_host(HostRange{0x30000, 0x1000, 0, true, -1});  // registered: out of every GPU's reach
  EXPECT_TRUE(m.may_hold_unreachable_host(true));
  m.add_host(HostRange{0x30000, 0x1000, 0, false, 6});  // the same base again, now shared
  EXPECT_FALSE(m.may_hold_unreachable_host(true));
  m.remove_host(0x30000);
  m.remove_host(0x20000);
  EXPECT_FALSE(m.may_hold_unreachable_host(false));
}

TEST(MemoryMapTest, AMovedVariablesOldAddressStandsForItsNewOneInCopiesAndKernelArguments) {
  MemoryMap m;
  EXPECT_FALSE(m.device_side(0x50010));
  ASSERT_TRUE(m.add_device(0x90000, 0x40, 0));  // where the variable lies on the target
  ASSERT_TRUE(m.add_moved_variable(0x50000, 0x40, 0, 0x90000));
  EXPECT_EQ(m.device_side(0x50010), 0x90010u);
  EXPECT_FALSE(m.device_side(0x50040));  // past its end
  uint64_t words[3] = {0x50008, 0x1234, 0x5003f};
  std::span<uint8_t> args(reinterpret_cast<uint8_t*>(words), sizeof words);
  m.follow_moved_variables(args);
  EXPECT_EQ(words[0], 0x90008u);
  EXPECT_EQ(words[1], 0x1234u);
  EXPECT_EQ(words[2], 0x9003fu);
  // A second move replaces where it lies; an allocation cannot take the old address.
  ASSERT_TRUE(m.add_moved_variable(0x50000, 0x40, 0, 0xa0000));
  EXPECT_EQ(m.device_side(0x50000), 0xa0000u);
  EXPECT_FALSE(m.add_device(0x50020, 0x100, 0));
}

}  // namespace
