#include <gtest/gtest.h>
#include <stdlib.h>

#include "client/core/device_list.hpp"

using namespace rgpu::client;

TEST(DeviceList, ParsesHostPortGpuEntries) {
  auto d = parse_device_list("gpu1:2,gpu2:9000:1,[::1]:7000:3,localhost:0");
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].server.host, "gpu1");
  EXPECT_EQ(d[0].server.port, 18515);
  EXPECT_EQ(d[0].gpu, 2);
  EXPECT_EQ(d[1].server.port, 9000);
  EXPECT_EQ(d[1].gpu, 1);
  EXPECT_EQ(d[2].server.host, "::1");
  EXPECT_EQ(d[2].server.port, 7000);
  EXPECT_EQ(d[2].gpu, 3);
}

TEST(DeviceList, RejectsEntriesWithoutGpu) {
  EXPECT_THROW(parse_device_list("gpu1"), std::invalid_argument);
  EXPECT_THROW(parse_device_list("gpu1:x"), std::invalid_argument);
  EXPECT_THROW(parse_device_list("gpu1:99999:0"), std::invalid_argument);
}

TEST(DeviceList, EntriesMayNameTheirTransport) {
  // ucx entries default to the ucx port; entries without a transport take
  // the one given (RGPU_TRANSPORT's).
  auto d = parse_device_list("ucx://gpu1:0,tcp://gpu2:9000:1,gpu3:2", "ucx");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].transport, "ucx");
  EXPECT_EQ(d[0].server.port, 18516);
  EXPECT_EQ(d[0].server_key(), "ucx://gpu1:18516");
  EXPECT_EQ(d[1].transport, "tcp");
  EXPECT_EQ(d[1].server.port, 9000);
  EXPECT_EQ(d[2].transport, "ucx");
  EXPECT_EQ(d[2].server.port, 18516);
  EXPECT_EQ(parse_device_list("gpu1:0")[0].server_key(), "gpu1:18515");
  EXPECT_THROW(parse_device_list("rdma://gpu1:0"), std::invalid_argument);
  setenv("RGPU_TRANSPORT", "carrier-pigeon", 1);
  EXPECT_THROW(device_list_from_environment(), std::invalid_argument);
  unsetenv("RGPU_TRANSPORT");
}

TEST(DeviceList, AcceptsRcudaVariables) {
  unsetenv("RGPU_DEVICES");
  setenv("RCUDA_DEVICE_COUNT", "2", 1);
  setenv("RCUDA_DEVICE_0", "nodeA:0", 1);
  setenv("RCUDA_DEVICE_1", "nodeB:1", 1);
  auto d = device_list_from_environment();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].server.host, "nodeB");
  EXPECT_EQ(d[1].gpu, 1);
  unsetenv("RCUDA_DEVICE_1");
  EXPECT_THROW(device_list_from_environment(), std::invalid_argument);
  unsetenv("RCUDA_DEVICE_COUNT");
  unsetenv("RCUDA_DEVICE_0");
}

TEST(DeviceList, DefaultsToLocalGpuZero) {
  unsetenv("RGPU_DEVICES");
  unsetenv("RCUDA_DEVICE_COUNT");
  auto d = device_list_from_environment();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].server.host, "localhost");
  EXPECT_EQ(d[0].gpu, 0);
}
