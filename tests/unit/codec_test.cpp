#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "protocol/codec.hpp"
#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"

using namespace rgpu::proto;

TEST(Codec, RoundTripsValuesAndStrings) {
  Writer w;
  w.put<uint32_t>(7).put<double>(2.5).put_string("kernel").put_bytes("\0\1\2", 3);
  Reader r(w.bytes());
  EXPECT_EQ(r.get<uint32_t>(), 7u);
  EXPECT_EQ(r.get<double>(), 2.5);
  EXPECT_EQ(r.get_string(), "kernel");
  auto b = r.get_bytes();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[2], 2);
  r.expect_end();
}

TEST(Codec, EveryTruncationIsAnError) {
  Writer w;
  w.put<uint64_t>(1).put_string("abcdef").put<int32_t>(-1);
  for (size_t n = 0; n < w.size(); ++n) {
    Reader r(std::span<const uint8_t>(w.bytes().data(), n));
    EXPECT_THROW(
        {
          r.get<uint64_t>();
          r.get_string();
          r.get<int32_t>();
        },
        DecodeError)
        << "prefix " << n;
  }
}

TEST(Codec, HugeLengthPrefixDoesNotOverread) {
  Writer w;
  w.put<uint32_t>(0xffffffffu).put<uint8_t>(1);
  Reader r(w.bytes());
  EXPECT_THROW(r.get_bytes(), DecodeError);
}

// Found by fuzzing the dispatcher (UBSan): an enum value off the wire that
// no enumerator names was loaded as the enum, which is undefined.
TEST(Codec, EnumValuesNoEnumeratorNamesAreReadAsNumbers) {
  Writer w;
  w.put<uint32_t>(8704);
  Reader r(w.bytes());
  EXPECT_EQ(static_cast<uint32_t>(r.get<cudaDeviceAttr>()), 8704u);
  r.expect_end();
}

TEST(Codec, TrailingBytesAreRejected) {
  Writer w;
  w.put<uint32_t>(1).put<uint8_t>(9);
  Reader r(w.bytes());
  r.get<uint32_t>();
  EXPECT_THROW(r.expect_end(), DecodeError);
}

TEST(Handshake, HelloRoundTrip) {
  Hello h;
  h.protocol_version = kProtocolVersion;
  h.cuda_runtime_version = 13000;
  h.gpus = {0, 3};
  h.client_name = "matrixMul";
  Writer w;
  h.encode(w);
  Reader r(w.bytes());
  Hello back = Hello::decode(r);
  EXPECT_EQ(back.gpus, h.gpus);
  EXPECT_EQ(back.client_name, "matrixMul");
  EXPECT_EQ(back.cuda_runtime_version, 13000);
}

TEST(Handshake, AbsurdGpuCountIsMalformed) {
  Writer w;
  w.put<uint32_t>(kProtocolVersion).put<int32_t>(13000).put<uint32_t>(1u << 30);
  Reader r(w.bytes());
  EXPECT_THROW(Hello::decode(r), DecodeError);
}
