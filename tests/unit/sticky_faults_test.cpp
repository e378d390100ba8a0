#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "server/pool/server_counters.hpp"
#include "server/worker/sticky_faults.hpp"

using namespace rgpu::server;

TEST(StickyFaults, KernelFaultsAndLostMpsServersAreStickyOthersNot) {
  EXPECT_TRUE(is_sticky_fault(cudaErrorIllegalAddress));
  EXPECT_TRUE(is_sticky_fault(cudaErrorAssert));
  EXPECT_TRUE(is_sticky_fault(cudaErrorMpsServerNotReady));
  EXPECT_FALSE(is_sticky_fault(cudaSuccess));
  EXPECT_FALSE(is_sticky_fault(cudaErrorMemoryAllocation));
  EXPECT_FALSE(is_sticky_fault(cudaErrorInvalidValue));
}

TEST(StickyFaults, AWorkerCountsItsFirstFaultOnce) {
  ServerCounters counters;
  report_sticky_fault(&counters, 2, cudaErrorInvalidValue);
  EXPECT_EQ(counters.sticky_faults(2), 0u);
  report_sticky_fault(&counters, 2, cudaErrorIllegalAddress);
  report_sticky_fault(&counters, 2, cudaErrorIllegalAddress);
  EXPECT_EQ(counters.sticky_faults(2), 1u);
  EXPECT_EQ(counters.sticky_faults(0), 0u);
  EXPECT_EQ(counters.sticky_faults(-1), 0u);
}
