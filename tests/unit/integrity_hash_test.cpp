// The digest behind the answer to NVIDIA's runtime's integrity check. That
// NVIDIA's runtime accepts rgpu's answers is shown on the GPU (static-runtime
// corpus); here, MD2 against RFC 1319's test suite and the HMAC built on it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "client/cuda/export_tables/integrity_hash.hpp"
#include "client/cuda/export_tables/md2.hpp"

using rgpu::client::DeviceIdentity;
using rgpu::client::integrity_hash;
using rgpu::client::IntegrityInput;
using rgpu::client::Md2;

namespace {

std::string hex(const std::array<uint8_t, 16>& d) {
  std::string s;
  char b[3];
  for (uint8_t x : d) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

std::string md2(const std::string& text) {
  Md2 m;
  m.update(text.data(), text.size());
  return hex(m.finish());
}

IntegrityInput input(uint32_t version) {
  return {13000, version, 1234, 5678, reinterpret_cast<const void*>(0x1000), reinterpret_cast<const void*>(0x2000),
          reinterpret_cast<const void*>(0x3000), 1800000000};
}

}  // namespace

TEST(Md2, Rfc1319TestSuite) {
  EXPECT_EQ(md2(""), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(md2("a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(md2("abc"), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(md2("message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
  EXPECT_EQ(md2("abcdefghijklmnopqrstuvwxyz"), "4e8ddff3650292ab5a4108c3aa47940b");
  EXPECT_EQ(md2("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "d5976f79d83d3a0dc9806c3c66f3efd8");
}

TEST(IntegrityHash, FixedAnswersForVersionsEndingInZeroAndOne) {
  // What NVIDIA's driver answered for 13000 and 13001 on the H100.
  auto a = integrity_hash(input(13000), {});
  EXPECT_EQ(a[0], 0x3341181C03CB675CULL);
  EXPECT_EQ(a[1], 0x8ED383AA1F4CD1E8ULL);
  auto b = integrity_hash(input(13001), {});
  EXPECT_EQ(b[0], 0x1841181C03CB675CULL);
  EXPECT_EQ(b[1], 0x8ED383AA1F4CD1E8ULL);
}

TEST(IntegrityHash, IsHmacMd2OfTheInputAndDevices) {
  const uint8_t key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                           0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
  DeviceIdentity dev{};
  std::memset(dev.uuid.bytes, 0x5a, sizeof dev.uuid.bytes);
  dev.pci_bus = 0x41;
  IntegrityInput in = input(13002);
  uint8_t pad[16];
  Md2 inner;
  for (size_t i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x36;
  inner.update(pad, 16);
  inner.update(&in, sizeof in);
  inner.update(&dev, sizeof dev);
  auto inner_digest = inner.finish();
  Md2 outer;
  for (size_t i = 0; i < 16; ++i) pad[i] = key[i] ^ 0x5c;
  outer.update(pad, 16);
  outer.update(inner_digest.data(), inner_digest.size());
  auto digest = outer.finish();
  uint64_t expected[2];
  std::memcpy(expected, digest.data(), sizeof expected);
  auto got = integrity_hash(in, {&dev, 1});
  EXPECT_EQ(got[0], expected[0]);
  EXPECT_EQ(got[1], expected[1]);
  // Every input word counts: another thread, another answer.
  in.thread += 1;
  EXPECT_NE(integrity_hash(in, {&dev, 1}), got);
}
