// Array formats (element sizes, driver formats) and the host-test backend's
// array layout: 3-D copies with positions on both sides land where CUDA
// puts them.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "client/cuda/array_formats.hpp"
#include "protocol/channel_format.hpp"
#include "server/backend/host/host_arrays.hpp"

using namespace rgpu;

TEST(ChannelFormat, ElementSizes) {
  EXPECT_EQ(proto::channel_element_size({32, 0, 0, 0, cudaChannelFormatKindFloat}), 4u);
  EXPECT_EQ(proto::channel_element_size({16, 16, 0, 0, cudaChannelFormatKindUnsigned}), 4u);
  EXPECT_EQ(proto::channel_element_size({32, 32, 32, 32, cudaChannelFormatKindSigned}), 16u);
  EXPECT_EQ(proto::channel_element_size({8, 0, 0, 0, cudaChannelFormatKindUnsigned}), 1u);
  EXPECT_EQ(proto::channel_element_size({16, 0, 0, 0, cudaChannelFormatKindFloat}), 2u);
  // Three channels, mixed sizes, gaps, 8-bit floats, other kinds: refused.
  EXPECT_EQ(proto::channel_element_size({32, 32, 32, 0, cudaChannelFormatKindFloat}), 0u);
  EXPECT_EQ(proto::channel_element_size({32, 16, 0, 0, cudaChannelFormatKindFloat}), 0u);
  EXPECT_EQ(proto::channel_element_size({32, 0, 32, 0, cudaChannelFormatKindFloat}), 0u);
  EXPECT_EQ(proto::channel_element_size({8, 0, 0, 0, cudaChannelFormatKindFloat}), 0u);
  EXPECT_EQ(proto::channel_element_size({0, 0, 0, 0, cudaChannelFormatKindFloat}), 0u);
  EXPECT_EQ(proto::channel_element_size({8, 0, 0, 0, cudaChannelFormatKindNV12}), 0u);
}

TEST(ChannelFormat, DriverFormatsRoundTrip) {
  for (CUarray_format f : {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT32,
                           CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT})
    for (unsigned channels : {1u, 2u, 4u}) {
      cudaChannelFormatDesc d;
      ASSERT_TRUE(client::to_channel_desc(f, channels, &d));
      CUarray_format back;
      unsigned back_channels;
      client::to_array_format(d, &back, &back_channels);
      EXPECT_EQ(back, f);
      EXPECT_EQ(back_channels, channels);
    }
  cudaChannelFormatDesc d;
  EXPECT_FALSE(client::to_channel_desc(CU_AD_FORMAT_FLOAT, 3, &d));
  EXPECT_FALSE(client::to_channel_desc(CU_AD_FORMAT_NV12, 1, &d));
}

TEST(HostArrays, CopiesHonourPositionsAndPitches) {
  server::HostArrays arrays;
  // 6 x 4 x 3 elements of 4 bytes.
  server::ArraySpec spec{{32, 0, 0, 0, cudaChannelFormatKindSigned}, {6, 4, 3}, 0};
  uint64_t a;
  ASSERT_EQ(arrays.array_create(spec, &a), cudaSuccess);
  std::vector<int> all(6 * 4 * 3, -1);
  server::CopySide whole{0, all.data(), 6 * sizeof(int), 4, {}};
  server::CopySide array{a, nullptr, 0, 0, {}};
  ASSERT_EQ(arrays.memcpy3d_async(array, whole, {6, 4, 3}, cudaMemcpyHostToDevice, 0), cudaSuccess);
  // A 2 x 2 x 2 box from a host buffer with 10-int rows and 5-row slices,
  // taken at (1, 2, 1), put at array element (3, 1, 1).
  std::vector<int> src(10 * 5 * 3);
  std::iota(src.begin(), src.end(), 0);
  server::CopySide from{0, src.data(), 10 * sizeof(int), 5, {1 * sizeof(int), 2, 1}};
  server::CopySide to{a, nullptr, 0, 0, {3, 1, 1}};
  ASSERT_EQ(arrays.memcpy3d_async(to, from, {2, 2, 2}, cudaMemcpyHostToDevice, 0), cudaSuccess);
  ASSERT_EQ(arrays.memcpy3d_async(whole, array, {6, 4, 3}, cudaMemcpyDeviceToHost, 0), cudaSuccess);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 4; ++y)
      for (size_t x = 0; x < 6; ++x) {
        bool in_box = x >= 3 && x < 5 && y >= 1 && y < 3 && z >= 1;
        int want = in_box ? src[((z - 1 + 1) * 5 + (y - 1 + 2)) * 10 + (x - 3 + 1)] : -1;
        EXPECT_EQ(all[(z * 4 + y) * 6 + x], want) << x << "," << y << "," << z;
      }
  EXPECT_EQ(arrays.array_destroy(a), cudaSuccess);
  EXPECT_EQ(arrays.array_destroy(a), cudaErrorInvalidResourceHandle);
}

TEST(HostArrays, MipmapLevelsHalveAndLayersStay) {
  server::HostArrays arrays;
  server::ArraySpec spec{{8, 0, 0, 0, cudaChannelFormatKindUnsigned}, {16, 4, 3}, cudaArrayLayered};
  uint64_t m, level;
  ASSERT_EQ(arrays.mipmapped_array_create(spec, 5, &m), cudaSuccess);
  ASSERT_EQ(arrays.mipmapped_array_level(m, 4, &level), cudaSuccess);
  // Level 4 of 16 x 4 x 3 layers: 1 x 1, still 3 layers; all of it is copied.
  std::vector<uint8_t> in{7, 8, 9}, out(3);
  server::CopySide host_in{0, in.data(), 1, 1, {}}, host_out{0, out.data(), 1, 1, {}};
  server::CopySide lvl{level, nullptr, 0, 0, {}};
  ASSERT_EQ(arrays.memcpy3d_async(lvl, host_in, {1, 1, 3}, cudaMemcpyHostToDevice, 0), cudaSuccess);
  ASSERT_EQ(arrays.memcpy3d_async(host_out, lvl, {1, 1, 3}, cudaMemcpyDeviceToHost, 0), cudaSuccess);
  EXPECT_EQ(out, in);
  EXPECT_EQ(arrays.mipmapped_array_level(m, 5, &level), cudaErrorInvalidValue);
  EXPECT_EQ(arrays.mipmapped_array_destroy(m), cudaSuccess);
}
