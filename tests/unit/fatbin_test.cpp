// Fat binary handling against real nvcc output (tests/unit/fatbin_kernels):
// every compression mode, multi-architecture and PTX-only builds must give
// the same kernels and layouts, and damaged input must fail cleanly.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "fatbin/fatbin_container.hpp"
#include "fatbin/fatbin_hash.hpp"
#include "fatbin/kernel_params.hpp"

using namespace rgpu::fatbin;

namespace {

using Layouts = std::map<std::string, std::vector<KernelParam>>;

std::vector<std::byte> load(const std::string& name) {
  std::ifstream in(std::string(RGPU_FATBIN_DIR) + "/" + name + ".fatbin", std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(raw.empty()) << name;
  std::vector<std::byte> out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

Layouts layouts(const std::vector<KernelInfo>& kernels) {
  Layouts out;
  for (auto& k : kernels) EXPECT_TRUE(out.emplace(k.name, k.params).second) << "twice: " << k.name;
  return out;
}

Layouts layouts(const std::string& file) { return layouts(kernels_in(parse_fatbin(load(file)))); }

const char* const kFiles[] = {"default", "size",   "speed",     "balance",  "none",    "no_compress",
                              "all_zstd", "all_lz4", "sm90", "multiarch", "ptx_only"};

// Layouts worked out by hand from kernels.cu with the CUDA ABI's rules
// (each parameter at its natural alignment, structs by value whole).
Layouts expected() {
  return {
      {"_Z5mixedPif6PaddedcPd", {{0, 8}, {8, 4}, {16, 16}, {32, 1}, {40, 8}}},
      {"_Z9no_paramsv", {}},
      {"plain_c", {{0, 4}, {4, 2}}},
      {"_Z9templatedIfEvPT_S0_", {{0, 8}, {8, 4}}},
      {"_Z9templatedIdEvPT_S0_", {{0, 8}, {8, 8}}},
      {"_Z8by_value6Arraysx", {{0, 24}, {24, 8}}},
      {"_Z6twentyiiiiiiiiiiccdiiiiiiPf",
       {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 4}, {36, 4},
        {40, 1}, {41, 1}, {48, 8}, {56, 4}, {60, 4}, {64, 4}, {68, 4}, {72, 4}, {76, 4}, {80, 8}}},
      {"_ZN2ns7alignedE6float4c4TinybtPS0_", {{0, 16}, {16, 1}, {17, 3}, {20, 1}, {22, 2}, {24, 8}}},
  };
}

// Entry kinds and flags straight from the container bytes, to check that
// each build really exercises the format it is named for.
struct RawEntry {
  uint16_t kind;
  uint64_t flags;
};
std::vector<RawEntry> raw_entries(const std::vector<std::byte>& b) {
  std::vector<RawEntry> out;
  for (size_t off = 16; off < b.size();) {
    uint32_t header_size;
    uint64_t padded;
    RawEntry e;
    std::memcpy(&e.kind, &b[off], 2);
    std::memcpy(&header_size, &b[off + 4], 4);
    std::memcpy(&padded, &b[off + 8], 8);
    std::memcpy(&e.flags, &b[off + 40], 8);
    out.push_back(e);
    off += header_size + padded;
  }
  return out;
}
constexpr uint64_t kLz4 = 0x2000, kZstd = 0x8000;
std::set<uint64_t> compressions(const std::string& file, uint16_t kind) {
  std::set<uint64_t> out;
  for (auto e : raw_entries(load(file)))
    if (e.kind == kind) out.insert(e.flags & (kLz4 | kZstd));
  return out;
}

TEST(Fatbin, KnownLayouts) { EXPECT_EQ(layouts("no_compress"), expected()); }

TEST(Fatbin, EveryBuildGivesTheSameLayouts) {
  for (const char* f : kFiles) EXPECT_EQ(layouts(f), expected()) << f;
}

TEST(Fatbin, BuildsCoverEveryCompressionFormat) {
  constexpr uint16_t ptx = 1, elf = 2;
  EXPECT_EQ(compressions("no_compress", ptx), std::set<uint64_t>{0});
  EXPECT_EQ(compressions("none", ptx), std::set<uint64_t>{0});
  EXPECT_EQ(compressions("default", ptx), std::set<uint64_t>{kZstd});
  EXPECT_EQ(compressions("balance", ptx), std::set<uint64_t>{kZstd});
  EXPECT_EQ(compressions("speed", ptx), std::set<uint64_t>{kLz4});
  EXPECT_EQ(compressions("size", elf), std::set<uint64_t>{kZstd});
  EXPECT_EQ(compressions("all_zstd", elf), std::set<uint64_t>{kZstd});
  EXPECT_EQ(compressions("all_lz4", elf), std::set<uint64_t>{kLz4});
}

TEST(Fatbin, CompressionDoesNotChangeTheImages) {
  auto plain = parse_fatbin(load("no_compress"));
  for (const char* f : {"default", "size", "speed", "all_zstd", "all_lz4"}) {
    auto fb = parse_fatbin(load(f));
    ASSERT_EQ(fb.entries.size(), plain.entries.size()) << f;
    for (size_t i = 0; i < fb.entries.size(); ++i) {
      EXPECT_EQ(fb.entries[i].kind, plain.entries[i].kind) << f;
      EXPECT_EQ(fb.entries[i].sm_arch, plain.entries[i].sm_arch) << f;
      // Stored images keep the container's 8-byte padding.
      auto& a = fb.entries[i].image;
      auto& b = plain.entries[i].image;
      ASSERT_LE(a.size(), b.size()) << f;
      EXPECT_LT(b.size() - a.size(), 8u) << f;
      EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << f << " entry " << i;
    }
  }
}

TEST(Fatbin, EntriesAndArchitectures) {
  auto fb = parse_fatbin(load("multiarch"));
  std::multiset<std::pair<EntryKind, uint32_t>> got;
  for (auto& e : fb.entries) got.insert({e.kind, e.sm_arch});
  std::multiset<std::pair<EntryKind, uint32_t>> want{
      {EntryKind::elf, 75}, {EntryKind::elf, 90}, {EntryKind::ptx, 90}, {EntryKind::elf, 120}};
  EXPECT_EQ(got, want);
  // Each image alone, PTX included, gives the whole layout.
  for (auto& e : fb.entries) {
    auto kernels = e.kind == EntryKind::elf
                       ? kernels_in_cubin(e.image)
                       : kernels_in_ptx({reinterpret_cast<const char*>(e.image.data()), e.image.size()});
    EXPECT_EQ(layouts(kernels), expected()) << e.sm_arch;
  }

  auto ptx = parse_fatbin(load("ptx_only"));
  ASSERT_EQ(ptx.entries.size(), 1u);
  EXPECT_EQ(ptx.entries[0].kind, EntryKind::ptx);
  EXPECT_EQ(ptx.entries[0].sm_arch, 75u);
}

TEST(Fatbin, PtxSignatures) {
  const char* ptx = R"(
    // .entry commented_out(.param .u32 x)
    .visible .entry k1(
      .param .u8 k1_param_0,
      .param .u64 .ptr .global .align 16 k1_param_1,  /* pointee alignment */
      .param .align 16 .b8 k1_param_2[20],
      .param .f16 k1_param_3
    )
    { ret; }
    .entry k2() { ret; }
    .func (.param .b32 r) not_a_kernel(.param .b32 p) { ret; }
  )";
  auto k = kernels_in_ptx(ptx);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "k1");
  std::vector<KernelParam> want{{0, 1}, {8, 8}, {16, 20}, {36, 2}};
  EXPECT_EQ(k[0].params, want);
  EXPECT_EQ(k[1].name, "k2");
  EXPECT_TRUE(k[1].params.empty());
  EXPECT_THROW(kernels_in_ptx(".entry k(.param .q32 x)"), FormatError);
  EXPECT_THROW(kernels_in_ptx(".entry k(.param .u32 x"), FormatError);
}

TEST(Fatbin, TotalSizeAndHash) {
  for (const char* f : kFiles) EXPECT_EQ(fatbin_total_size(load(f).data()), load(f).size()) << f;
  EXPECT_EQ(fatbin_hash({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");  // SHA-256 of nothing
  auto bytes = load("default");
  std::string h = fatbin_hash(bytes);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, fatbin_hash(bytes));
  bytes.back() ^= std::byte{1};
  EXPECT_NE(h, fatbin_hash(bytes));
}

TEST(Fatbin, NotAFatBinary) {
  std::vector<std::byte> garbage(100, std::byte{0x41});
  EXPECT_THROW(parse_fatbin(garbage), FormatError);
  EXPECT_THROW(fatbin_total_size(garbage.data()), FormatError);
  EXPECT_THROW(parse_fatbin({}), FormatError);
  EXPECT_THROW(kernels_in_cubin(garbage), FormatError);
}

// Parses a copy of exactly `n` bytes, so that sanitizers see any read past
// them: it must succeed or throw FormatError, nothing else.
void parse_exactly(std::span<const std::byte> b) {
  std::vector<std::byte> copy(b.begin(), b.end());
  try {
    kernels_in(parse_fatbin(copy));
  } catch (const FormatError&) {
  }
}

TEST(Fatbin, EveryTruncationFailsCleanly) {
  for (const char* f : kFiles) {
    auto bytes = load(f), patched = bytes;
    for (size_t n = 0; n < bytes.size(); ++n) {
      parse_exactly(std::span(bytes).first(n));
      // Same prefix with the container size fixed up, so the entry walk and
      // the decompressors meet the cut rather than the header check.
      if (n < 16) continue;
      uint64_t payload = n - 16;
      std::memcpy(&patched[8], &payload, 8);
      parse_exactly(std::span(patched).first(n));
    }
  }
}

TEST(Fatbin, RandomCorruptionFailsCleanly) {
  std::mt19937 rng(7);
  for (const char* f : kFiles) {
    auto bytes = load(f);
    for (int i = 0; i < 2000; ++i) {
      auto broken = bytes;
      // Half the time aim at the headers, where sizes and flags live.
      size_t span = i % 2 ? broken.size() : std::min<size_t>(broken.size(), 16 + 112);
      for (int j = 0, n = 1 + static_cast<int>(rng() % 4); j < n; ++j)
        broken[rng() % span] = std::byte(rng() & 0xff);
      parse_exactly(broken);
    }
  }
}

}  // namespace
