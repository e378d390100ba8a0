// Fat binary handling against real nvcc output: compressed (zstd), plain,
// multi-architecture and PTX-only builds must give the same kernels and
// layouts, and damaged input must fail cleanly.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <iterator>
#include <random>

#include "fatbin/fatbin_container.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "fatbin/kernel_params.hpp"

using namespace rgpu::fatbin;

namespace {

std::vector<std::byte> load(const std::string& name) {
  std::ifstream in(std::string(RGPU_FATBIN_DIR) + "/" + name, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(raw.empty()) << name;
  std::vector<std::byte> out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

std::map<std::string, std::vector<KernelParam>> layouts(const std::string& file) {
  auto bytes = load(file);
  std::map<std::string, std::vector<KernelParam>> out;
  for (auto& k : kernels_in(parse_fatbin(bytes))) out[k.name] = k.params;
  return out;
}

const char* kFiles[] = {"default.fatbin", "size.fatbin", "nocompress.fatbin", "multiarch.fatbin", "ptx_only.fatbin"};

TEST(Fatbin, KnownLayouts) {
  auto k = layouts("nocompress.fatbin");
  ASSERT_EQ(k.count("_Z5mixedPif6PaddedcPd"), 1u);
  std::vector<KernelParam> mixed{{0, 8}, {8, 4}, {16, 16}, {32, 1}, {40, 8}};
  EXPECT_EQ(k["_Z5mixedPif6PaddedcPd"], mixed);
  EXPECT_TRUE(k["_Z9no_paramsv"].empty());
  std::vector<KernelParam> plain{{0, 4}, {4, 2}};
  EXPECT_EQ(k["plain_c"], plain);
  std::vector<KernelParam> tf{{0, 8}, {8, 4}}, td{{0, 8}, {8, 8}};
  EXPECT_EQ(k["_Z9templatedIfEvPT_S0_"], tf);
  EXPECT_EQ(k["_Z9templatedIdEvPT_S0_"], td);
  std::vector<KernelParam> bv{{0, 24}, {24, 8}};
  EXPECT_EQ(k["_Z8by_value6Arraysx"], bv);
  auto& t = k["_Z6twentyiiiiiiiiiiccdiiiiiiPf"];
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[10].offset, 40u);
  EXPECT_EQ(t[12].offset, 48u);
  EXPECT_EQ(t[19].offset, 80u);
  EXPECT_EQ(t[19].size, 8u);
}

TEST(Fatbin, EveryBuildGivesTheSameLayouts) {
  auto reference = layouts("nocompress.fatbin");
  for (const char* f : kFiles) EXPECT_EQ(layouts(f), reference) << f;
}

TEST(Fatbin, TotalSizeAndHash) {
  auto bytes = load("default.fatbin");
  EXPECT_EQ(fatbin_total_size(bytes.data()), bytes.size());
  std::string h = fatbin_hash(bytes);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, fatbin_hash(bytes));
  bytes.back() ^= std::byte{1};
  EXPECT_NE(h, fatbin_hash(bytes));
}

// Every truncation and random corruption either parses or throws
// FormatError; run under sanitizers it must never read out of bounds.
TEST(Fatbin, DamagedInputFailsCleanly) {
  for (const char* f : kFiles) {
    auto bytes = load(f);
    for (size_t n = 0; n < bytes.size(); n += std::max<size_t>(1, bytes.size() / 512)) {
      std::vector<std::byte> cut(bytes.begin(), bytes.begin() + n);
      try {
        kernels_in(parse_fatbin(cut));
      } catch (const FormatError&) {
      }
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
      auto broken = bytes;
      for (int j = 0; j < 4; ++j) broken[rng() % broken.size()] = std::byte(rng() & 0xff);
      try {
        kernels_in(parse_fatbin(broken));
      } catch (const FormatError&) {
      }
    }
  }
  std::vector<std::byte> garbage(100, std::byte{0x41});
  EXPECT_THROW(parse_fatbin(garbage), FormatError);
}

}  // namespace
