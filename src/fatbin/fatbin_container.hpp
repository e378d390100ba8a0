// NVIDIA's fat binary container: a header, then entries of PTX or ELF
// (cubin) images, each possibly compressed (zstd or LZ4 block).
// Malformed input throws FormatError; nothing is read past the buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace rgpu::fatbin {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr uint32_t kFatbinMagic = 0xBA55ED50;

// Reads a T at `off`, or throws FormatError if it would pass the end.
template <typename T>
T read_at(std::span<const std::byte> b, uint64_t off) {
  if (off > b.size() || sizeof(T) > b.size() - off) throw FormatError("fat binary truncated");
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

enum class EntryKind : uint16_t { ptx = 1, elf = 2 };

struct Entry {
  EntryKind kind;
  uint32_t sm_arch;              // e.g. 90 for sm_90 / compute_90
  std::vector<std::byte> image;  // decompressed; stored ones keep their padding
};

struct FatBinary {
  std::vector<Entry> entries;  // in container order; other kinds are skipped
};

// Bytes the container starting at `data` occupies (header + payload), for
// callers that only hold a pointer (__fatBinC_Wrapper_t::data); reads 16
// bytes; throws FormatError when `data` is not a fat binary.
size_t fatbin_total_size(const void* data);

FatBinary parse_fatbin(std::span<const std::byte> bytes);

}  // namespace rgpu::fatbin
