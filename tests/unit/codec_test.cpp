#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "protocol/codec.hpp"
#include "protocol/graph_image.hpp"
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

namespace {

rgpu::proto::GraphImage image_of(size_t nodes) {
  rgpu::proto::GraphImage g;
  g.nodes.resize(nodes);
  for (uint32_t i = 0; i < nodes; ++i) {
    g.nodes[i].handle = 100 + i;
    if (i) g.nodes[i].deps = {i - 1};
  }
  return g;
}

rgpu::proto::GraphImage read_image(const std::vector<uint8_t>& bytes) {
  rgpu::proto::Reader r(bytes);
  auto g = rgpu::proto::get_graph_image(r);
  r.expect_end();
  return g;
}

}  // namespace

TEST(GraphImage, RoundTripsNodesAttributesAndChildGraphs) {
  auto g = image_of(4);
  g.nodes[3].params.type = cudaGraphNodeTypeKernel;  // an attribute last in the message
  g.nodes[3].attributes.push_back({cudaLaunchAttributePriority, cudaLaunchAttributeValue{}});
  g.nodes[0].params.type = cudaGraphNodeTypeKernel;
  g.nodes[0].params.args = {1, 2, 3, 4};
  cudaLaunchAttributeValue v{};
  v.priority = 3;
  g.nodes[0].attributes.push_back({cudaLaunchAttributePriority, v});
  g.nodes[1].enabled = 0;
  g.nodes[1].original = 77;
  g.nodes[2].params.type = cudaGraphNodeTypeGraph;
  g.nodes[2].child.push_back(image_of(2));
  rgpu::proto::Writer w;
  rgpu::proto::put_graph_image(w, g);
  auto back = read_image(w.bytes());
  ASSERT_EQ(back.nodes.size(), 4u);
  EXPECT_EQ(back.nodes[3].attributes.size(), 1u);
  EXPECT_EQ(back.nodes[0].params.args, (std::vector<uint8_t>{1, 2, 3, 4}));
  ASSERT_EQ(back.nodes[0].attributes.size(), 1u);
  EXPECT_EQ(back.nodes[0].attributes[0].value.priority, 3);
  EXPECT_EQ(back.nodes[1].enabled, 0u);
  EXPECT_EQ(back.nodes[1].original, 77u);
  EXPECT_EQ(back.nodes[2].deps, (std::vector<uint32_t>{1}));
  ASSERT_EQ(back.nodes[2].child.size(), 1u);
  EXPECT_EQ(back.nodes[2].child[0].nodes.size(), 2u);
}

TEST(GraphImage, MalformedImagesAreRefused) {
  auto encode = [](const rgpu::proto::GraphImage& g) {
    rgpu::proto::Writer w;
    rgpu::proto::put_graph_image(w, g);
    return w.bytes();
  };
  auto later = image_of(2);
  later.nodes[0].deps = {1};  // a dependency on a later node
  EXPECT_THROW(read_image(encode(later)), rgpu::proto::DecodeError);
  auto itself = image_of(2);
  itself.nodes[1].deps = {1};
  EXPECT_THROW(read_image(encode(itself)), rgpu::proto::DecodeError);
  auto childless = image_of(1);
  childless.nodes[0].params.type = cudaGraphNodeTypeGraph;  // a child graph node without its graph
  EXPECT_THROW(read_image(encode(childless)), rgpu::proto::DecodeError);
  rgpu::proto::GraphImage deep = image_of(1);
  for (uint32_t i = 0; i <= rgpu::proto::kMaxGraphImageDepth; ++i) {
    rgpu::proto::GraphImage outer = image_of(1);
    outer.nodes[0].params.type = cudaGraphNodeTypeGraph;
    outer.nodes[0].child.push_back(std::move(deep));
    deep = std::move(outer);
  }
  EXPECT_THROW(read_image(encode(deep)), rgpu::proto::DecodeError);
  // Every truncation of a good image is an error, never a read past it.
  auto good = encode(image_of(3));
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    EXPECT_THROW(read_image(cut), rgpu::proto::DecodeError) << n;
  }
}
