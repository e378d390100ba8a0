#include "fatbin/fatbin_container.hpp"

#include <lz4.h>
#include <zstd.h>

#include <cstring>

namespace rgpu::fatbin {
namespace {

struct ContainerHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint64_t payload_size;
};

// Layout of an entry header as nvcc 13 writes it (read off its output).
struct EntryHeader {
  uint16_t kind;
  uint16_t unknown0;
  uint32_t header_size;
  uint64_t padded_size;      // bytes of payload that follow, padded
  uint32_t compressed_size;  // exact payload bytes when compressed
  uint32_t unknown1;
  uint16_t minor;
  uint16_t major;
  uint32_t arch;
  uint32_t name_offset;
  uint32_t name_size;
  uint64_t flags;
  uint64_t zero;
  uint64_t uncompressed_size;
};
static_assert(sizeof(EntryHeader) == 64);

constexpr uint64_t kFlagCompressedLz4 = 0x2000;
constexpr uint64_t kFlagCompressedZstd = 0x8000;
// No sane image decompresses to more than this.
constexpr uint64_t kMaxImage = 4ull << 30;

std::vector<std::byte> decompress(const EntryHeader& h, std::span<const std::byte> payload) {
  if (h.uncompressed_size > kMaxImage) throw FormatError("fat binary entry too large");
  size_t in = h.compressed_size ? h.compressed_size : payload.size();
  if (in > payload.size()) throw FormatError("compressed size past the entry");
  std::vector<std::byte> out(h.uncompressed_size);
  if (h.flags & kFlagCompressedZstd) {
    size_t n = ZSTD_decompress(out.data(), out.size(), payload.data(), in);
    if (ZSTD_isError(n)) throw FormatError(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(n);
  } else {
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(payload.data()), reinterpret_cast<char*>(out.data()),
                                static_cast<int>(in), static_cast<int>(out.size()));
    if (n < 0) throw FormatError("lz4: corrupt entry");
    out.resize(static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

size_t fatbin_total_size(const void* data) {
  ContainerHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kFatbinMagic) throw FormatError("not a fat binary");
  return h.header_size + h.payload_size;
}

FatBinary parse_fatbin(std::span<const std::byte> b) {
  auto h = read_at<ContainerHeader>(b, 0);
  if (h.magic != kFatbinMagic) throw FormatError("not a fat binary");
  if (h.header_size < sizeof h || h.payload_size > b.size() - std::min<size_t>(b.size(), h.header_size))
    throw FormatError("fat binary sizes past the buffer");
  FatBinary fb;
  size_t off = h.header_size, end = h.header_size + h.payload_size;
  while (off < end) {
    auto e = read_at<EntryHeader>(b, off);
    if (e.header_size < 16 || e.header_size > end - off) throw FormatError("bad entry header size");
    size_t data = off + e.header_size;
    if (e.padded_size > end - data) throw FormatError("entry past the fat binary");
    auto payload = b.subspan(data, e.padded_size);
    off = data + e.padded_size;
    if (e.kind != static_cast<uint16_t>(EntryKind::ptx) && e.kind != static_cast<uint16_t>(EntryKind::elf))
      continue;  // other kinds (e.g. LTO IR) carry nothing rgpu needs
    if (e.header_size < sizeof(EntryHeader)) throw FormatError("short entry header");
    Entry entry{static_cast<EntryKind>(e.kind), e.arch, {}};
    if (e.flags & (kFlagCompressedLz4 | kFlagCompressedZstd))
      entry.image = decompress(e, payload);
    else
      entry.image.assign(payload.begin(), payload.end());
    fb.entries.push_back(std::move(entry));
  }
  return fb;
}

}  // namespace rgpu::fatbin
