// Merging a chunk of software-coherent memory that the host and the GPU
// both changed while the host held its copy (coherent_memory.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "client/cudart/concurrent_writes.hpp"

using rgpu::client::merge_concurrent_writes;

TEST(ConcurrentWrites, EachSidesBytesSurvive) {
  std::vector<uint8_t> fetched(64, 0), now(64, 0), host(64, 0);
  now[10] = 0x11;   // the GPU's
  host[20] = 0x22;  // the host's
  EXPECT_EQ(merge_concurrent_writes(fetched.data(), now.data(), host.data(), host.size()), 0u);
  EXPECT_EQ(host[10], 0x11);
  EXPECT_EQ(host[20], 0x22);
  EXPECT_EQ(host[0], 0);
}

// systemWideAtomics: both add to one counter; the host's value is kept and
// the clash counted.
TEST(ConcurrentWrites, BytesBothChangedAreCounted) {
  std::vector<uint8_t> fetched(8, 1), now(8, 1), host(8, 1);
  now[0] = 9;
  host[0] = 5;
  now[1] = 7;
  host[1] = 7;  // the same value from both: still a clash
  EXPECT_EQ(merge_concurrent_writes(fetched.data(), now.data(), host.data(), host.size()), 2u);
  EXPECT_EQ(host[0], 5);
  EXPECT_EQ(host[2], 1);
}

TEST(ConcurrentWrites, UnchangedGpuLeavesTheHostCopy) {
  std::vector<uint8_t> fetched = {1, 2, 3, 4}, now = fetched, host = {1, 9, 3, 8};
  EXPECT_EQ(merge_concurrent_writes(fetched.data(), now.data(), host.data(), host.size()), 0u);
  EXPECT_EQ(host, (std::vector<uint8_t>{1, 9, 3, 8}));
}
