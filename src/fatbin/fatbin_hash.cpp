#include "fatbin/fatbin_hash.hpp"

#include <xxhash.h>

namespace rgpu::fatbin {

std::string fatbin_hash(std::span<const std::byte> image) {
  XXH128_canonical_t canonical;  // big-endian bytes: the hex reads high to low
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(image.data(), image.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : canonical.digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

}  // namespace rgpu::fatbin
