// The driver's texture descriptors as the runtime's and back, as NVIDIA's
// runtime maps them (texture_descs.hpp): NVIDIA's static runtime hands
// rgpu's driver CUDA_RESOURCE_DESC/CUDA_TEXTURE_DESC for every
// cudaCreateTextureObject, so each field must arrive as the program set it.
#include <gtest/gtest.h>

#include "client/cuda/texture_descs.hpp"

using namespace rgpu::client;

namespace {

CUDA_RESOURCE_DESC linear(CUarray_format format, unsigned channels) {
  CUDA_RESOURCE_DESC d{};
  d.resType = CU_RESOURCE_TYPE_LINEAR;
  d.res.linear.devPtr = 0x7f0000001000;
  d.res.linear.format = format;
  d.res.linear.numChannels = channels;
  d.res.linear.sizeInBytes = 4096;
  return d;
}

CUDA_RESOURCE_DESC pitched(CUarray_format format, unsigned channels) {
  CUDA_RESOURCE_DESC d{};
  d.resType = CU_RESOURCE_TYPE_PITCH2D;
  auto& p = d.res.pitch2D;
  p = {0x7f0000002000, format, channels, 33, 7, 512};
  return d;
}

}  // namespace

// convolutionFFT2D: float2 on linear memory, filtered linearly, wrapping.
TEST(TextureDescs, LinearFloat2AsTheRuntimeMadeIt) {
  cudaResourceDesc r;
  ASSERT_TRUE(to_runtime(linear(CU_AD_FORMAT_FLOAT, 2), &r));
  EXPECT_EQ(r.resType, cudaResourceTypeLinear);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.res.linear.devPtr), 0x7f0000001000u);
  EXPECT_EQ(r.res.linear.sizeInBytes, 4096u);
  cudaChannelFormatDesc f2 = cudaChannelFormatDesc{32, 32, 0, 0, cudaChannelFormatKindFloat};
  EXPECT_EQ(r.res.linear.desc.x, f2.x);
  EXPECT_EQ(r.res.linear.desc.y, f2.y);
  EXPECT_EQ(r.res.linear.desc.z, f2.z);
  EXPECT_EQ(r.res.linear.desc.w, f2.w);
  EXPECT_EQ(r.res.linear.desc.f, f2.f);

  CUDA_TEXTURE_DESC t{};
  t.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
  t.filterMode = CU_TR_FILTER_MODE_LINEAR;
  t.flags = CU_TRSF_READ_AS_INTEGER;  // what the runtime makes of cudaReadModeElementType
  cudaTextureDesc rt = to_runtime(t, r.res.linear.desc);
  EXPECT_EQ(rt.addressMode[0], cudaAddressModeWrap);
  EXPECT_EQ(rt.filterMode, cudaFilterModeLinear);
  EXPECT_EQ(rt.readMode, cudaReadModeElementType);
  EXPECT_EQ(rt.normalizedCoords, 0);
}

// Integers of 8 and 16 bits read as normalized floats unless the driver is
// told to read them as integers; 32-bit ones and floats as they are.
TEST(TextureDescs, ReadModeFollowsTheFormat) {
  CUDA_TEXTURE_DESC t{};
  cudaChannelFormatDesc u8 = cudaChannelFormatDesc{8, 8, 8, 8, cudaChannelFormatKindUnsigned},
                        i32 = cudaChannelFormatDesc{32, 0, 0, 0, cudaChannelFormatKindSigned},
                        h = cudaChannelFormatDesc{16, 0, 0, 0, cudaChannelFormatKindFloat};
  EXPECT_EQ(to_runtime(t, u8).readMode, cudaReadModeNormalizedFloat);
  EXPECT_EQ(to_runtime(t, i32).readMode, cudaReadModeElementType);
  EXPECT_EQ(to_runtime(t, h).readMode, cudaReadModeElementType);
  t.flags = CU_TRSF_READ_AS_INTEGER;
  EXPECT_EQ(to_runtime(t, u8).readMode, cudaReadModeElementType);

  cudaTextureDesc r{};
  r.readMode = cudaReadModeElementType;
  EXPECT_TRUE(to_driver(r, u8).flags & CU_TRSF_READ_AS_INTEGER);
  r.readMode = cudaReadModeNormalizedFloat;
  EXPECT_FALSE(to_driver(r, u8).flags & CU_TRSF_READ_AS_INTEGER);
}

// Every field of the texture descriptor survives driver -> runtime -> driver.
TEST(TextureDescs, TextureDescRoundTrip) {
  CUDA_TEXTURE_DESC t{};
  t.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
  t.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
  t.addressMode[2] = CU_TR_ADDRESS_MODE_BORDER;
  t.filterMode = CU_TR_FILTER_MODE_LINEAR;
  t.flags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
            CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;
  t.maxAnisotropy = 8;
  t.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
  t.mipmapLevelBias = 0.5f;
  t.minMipmapLevelClamp = 1.0f;
  t.maxMipmapLevelClamp = 3.0f;
  for (int i = 0; i < 4; ++i) t.borderColor[i] = 0.25f * i;
  cudaChannelFormatDesc u16 = cudaChannelFormatDesc{16, 16, 0, 0, cudaChannelFormatKindUnsigned};
  cudaTextureDesc r = to_runtime(t, u16);
  EXPECT_EQ(r.addressMode[1], cudaAddressModeMirror);
  EXPECT_EQ(r.addressMode[2], cudaAddressModeBorder);
  EXPECT_EQ(r.sRGB, 1);
  EXPECT_EQ(r.normalizedCoords, 1);
  EXPECT_EQ(r.disableTrilinearOptimization, 1);
  EXPECT_EQ(r.seamlessCubemap, 1);
  EXPECT_EQ(r.maxAnisotropy, 8u);
  EXPECT_EQ(r.mipmapFilterMode, cudaFilterModeLinear);
  EXPECT_FLOAT_EQ(r.borderColor[3], 0.75f);
  CUDA_TEXTURE_DESC back = to_driver(r, u16);
  EXPECT_EQ(back.flags, t.flags);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back.addressMode[i], t.addressMode[i]);
  EXPECT_EQ(back.filterMode, t.filterMode);
  EXPECT_EQ(back.maxAnisotropy, t.maxAnisotropy);
  EXPECT_EQ(back.mipmapFilterMode, t.mipmapFilterMode);
  EXPECT_FLOAT_EQ(back.mipmapLevelBias, t.mipmapLevelBias);
  EXPECT_FLOAT_EQ(back.minMipmapLevelClamp, t.minMipmapLevelClamp);
  EXPECT_FLOAT_EQ(back.maxMipmapLevelClamp, t.maxMipmapLevelClamp);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(back.borderColor[i], t.borderColor[i]);
}

// Every resource type, each driver format rgpu handles with 1, 2 and 4
// channels, there and back.
TEST(TextureDescs, ResourceDescRoundTrip) {
  const CUarray_format formats[] = {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT16,
                                    CU_AD_FORMAT_UNSIGNED_INT32, CU_AD_FORMAT_SIGNED_INT8,
                                    CU_AD_FORMAT_SIGNED_INT16,   CU_AD_FORMAT_SIGNED_INT32,
                                    CU_AD_FORMAT_HALF,           CU_AD_FORMAT_FLOAT};
  for (CUarray_format f : formats)
    for (unsigned c : {1u, 2u, 4u}) {
      CUDA_RESOURCE_DESC d = linear(f, c);
      cudaResourceDesc r;
      ASSERT_TRUE(to_runtime(d, &r)) << f << " x" << c;
      CUDA_RESOURCE_DESC back;
      to_driver(r, &back);
      EXPECT_EQ(back.res.linear.format, f);
      EXPECT_EQ(back.res.linear.numChannels, c);
      EXPECT_EQ(back.res.linear.devPtr, d.res.linear.devPtr);
      EXPECT_EQ(back.res.linear.sizeInBytes, d.res.linear.sizeInBytes);

      ASSERT_TRUE(to_runtime(pitched(f, c), &r));
      to_driver(r, &back);
      EXPECT_EQ(back.resType, CU_RESOURCE_TYPE_PITCH2D);
      EXPECT_EQ(back.res.pitch2D.format, f);
      EXPECT_EQ(back.res.pitch2D.numChannels, c);
      EXPECT_EQ(back.res.pitch2D.width, 33u);
      EXPECT_EQ(back.res.pitch2D.height, 7u);
      EXPECT_EQ(back.res.pitch2D.pitchInBytes, 512u);
    }

  CUDA_RESOURCE_DESC a{};
  a.resType = CU_RESOURCE_TYPE_ARRAY;
  a.res.array.hArray = reinterpret_cast<CUarray>(0x1234);
  cudaResourceDesc r;
  ASSERT_TRUE(to_runtime(a, &r));
  EXPECT_EQ(r.res.array.array, reinterpret_cast<cudaArray_t>(0x1234));
  a.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  a.res.mipmap.hMipmappedArray = reinterpret_cast<CUmipmappedArray>(0x5678);
  ASSERT_TRUE(to_runtime(a, &r));
  EXPECT_EQ(r.resType, cudaResourceTypeMipmappedArray);
  EXPECT_EQ(r.res.mipmap.mipmap, reinterpret_cast<cudaMipmappedArray_t>(0x5678));
  CUDA_RESOURCE_DESC back;
  to_driver(r, &back);
  EXPECT_EQ(back.res.mipmap.hMipmappedArray, a.res.mipmap.hMipmappedArray);
}

TEST(TextureDescs, RefusesWhatRgpuDoesNotHandle) {
  cudaResourceDesc r;
  EXPECT_FALSE(to_runtime(linear(CU_AD_FORMAT_FLOAT, 3), &r));
  EXPECT_FALSE(to_runtime(linear(CU_AD_FORMAT_NV12, 1), &r));
  CUDA_RESOURCE_DESC odd = linear(CU_AD_FORMAT_FLOAT, 1);
  odd.resType = static_cast<CUresourcetype>(7);
  EXPECT_FALSE(to_runtime(odd, &r));
}

TEST(TextureDescs, ViewRoundTrip) {
  CUDA_RESOURCE_VIEW_DESC v{CU_RES_VIEW_FORMAT_FLOAT_2X32, 16, 8, 1, 0, 2, 0, 0, {}};
  cudaResourceViewDesc r = to_runtime(v);
  EXPECT_EQ(r.format, cudaResViewFormatFloat2);
  EXPECT_EQ(r.lastMipmapLevel, 2u);
  CUDA_RESOURCE_VIEW_DESC back = to_driver(r);
  EXPECT_EQ(back.format, v.format);
  EXPECT_EQ(back.width, 16u);
  EXPECT_EQ(back.height, 8u);
  EXPECT_EQ(back.lastMipmapLevel, 2u);
}
