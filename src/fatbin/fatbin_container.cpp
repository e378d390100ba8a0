#include "fatbin/fatbin_container.hpp"

#include <lz4.h>
#include <zstd.h>

#include <limits>

namespace rgpu::fatbin {
namespace {

struct ContainerHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint64_t payload_size;  // bytes of entries after the header
};
static_assert(sizeof(ContainerHeader) == 16);

// Entry header as read by ZLUDA (zluda_dump), cuda-fatbin-decompression and
// jiegec/fatbinary, checked against nvcc 13.0 output. PTX entries and sm_100+
// ELF entries carry a longer header (80 / 112 bytes: options_offset points at
// an extension); the payload always starts at header_size.
struct EntryHeader {
  uint16_t kind;
  uint16_t version;          // 0x0101
  uint32_t header_size;
  uint64_t padded_size;      // payload bytes that follow, 8-aligned
  uint32_t compressed_size;  // exact payload bytes when compressed, else 0
  uint32_t options_offset;
  uint16_t minor;
  uint16_t major;
  uint32_t arch;
  uint32_t name_offset;
  uint32_t name_size;
  uint64_t flags;
  uint64_t reserved;
  uint64_t uncompressed_size;  // when compressed, else 0
};
static_assert(sizeof(EntryHeader) == 64);

// nvcc 13: --compress-mode=speed writes LZ4 blocks, the other modes zstd
// frames; CUDA before 12.8 wrote LZ4 only.
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
// Refuse images no real kernel reaches, before allocating for them.
constexpr uint64_t kMaxImage = 1ull << 30;
// An LZ4 block cannot expand more than 255-fold (each length byte adds at
// most 255 bytes of output).
constexpr uint64_t kLz4MaxRatio = 255;

std::vector<std::byte> decompress(const EntryHeader& h, std::span<const std::byte> payload) {
  bool lz4 = h.flags & kFlagLz4, zstd = h.flags & kFlagZstd;
  if (lz4 && zstd) throw FormatError("fat binary entry flagged both LZ4 and zstd");
  if (h.compressed_size == 0 || h.compressed_size > payload.size())
    throw FormatError("compressed size past the fat binary entry");
  if (h.uncompressed_size > kMaxImage) throw FormatError("fat binary entry too large");
  auto in = payload.first(h.compressed_size);
  std::vector<std::byte> out;
  if (zstd) {
    unsigned long long framed = ZSTD_getFrameContentSize(in.data(), in.size());
    if (framed == ZSTD_CONTENTSIZE_ERROR) throw FormatError("zstd: not a zstd frame");
    if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != h.uncompressed_size)
      throw FormatError("zstd frame size disagrees with the entry header");
    out.resize(h.uncompressed_size);
    size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw FormatError(std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != out.size()) throw FormatError("zstd: image shorter than the entry header says");
  } else {
    if (h.uncompressed_size > in.size() * kLz4MaxRatio ||
        h.uncompressed_size > static_cast<uint64_t>(std::numeric_limits<int>::max()))
      throw FormatError("lz4: entry header size impossible for its payload");
    out.resize(h.uncompressed_size);
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (n < 0) throw FormatError("lz4: corrupt entry");
    if (static_cast<size_t>(n) != out.size()) throw FormatError("lz4: image shorter than the entry header says");
  }
  return out;
}

ContainerHeader container_header(std::span<const std::byte> b) {
  auto h = read_at<ContainerHeader>(b, 0);
  if (h.magic != kFatbinMagic) throw FormatError("not a fat binary (bad magic)");
  if (h.version != 1) throw FormatError("unsupported fat binary version " + std::to_string(h.version));
  if (h.header_size < sizeof h) throw FormatError("fat binary header too short");
  return h;
}

}  // namespace

size_t fatbin_total_size(const void* data) {
  auto h = container_header({static_cast<const std::byte*>(data), sizeof(ContainerHeader)});
  if (h.payload_size > std::numeric_limits<size_t>::max() - h.header_size)
    throw FormatError("fat binary payload size overflows");
  return h.header_size + h.payload_size;
}

FatBinary parse_fatbin(std::span<const std::byte> b) {
  auto h = container_header(b);
  if (h.header_size > b.size() || h.payload_size > b.size() - h.header_size)
    throw FormatError("fat binary sizes past the buffer");
  FatBinary fb;
  uint64_t off = h.header_size, end = h.header_size + h.payload_size;
  while (off < end) {
    auto e = read_at<EntryHeader>(b.first(end), off);
    if (e.header_size < sizeof(EntryHeader) || e.header_size > end - off)
      throw FormatError("bad fat binary entry header size");
    uint64_t data = off + e.header_size;
    if (e.padded_size > end - data) throw FormatError("fat binary entry past the container");
    auto payload = b.subspan(data, e.padded_size);
    off = data + e.padded_size;
    if (e.kind != static_cast<uint16_t>(EntryKind::ptx) && e.kind != static_cast<uint16_t>(EntryKind::elf))
      continue;  // other kinds (e.g. LTO IR) carry nothing rgpu needs
    Entry entry{static_cast<EntryKind>(e.kind), e.arch, {}};
    if (e.flags & (kFlagLz4 | kFlagZstd))
      entry.image = decompress(e, payload);
    else
      entry.image.assign(payload.begin(), payload.end());
    fb.entries.push_back(std::move(entry));
  }
  return fb;
}

}  // namespace rgpu::fatbin
