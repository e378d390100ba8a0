#include "fatbin/fatbin_hash.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace rgpu::fatbin {

std::string fatbin_hash(std::span<const std::byte> image) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(image.data(), image.size(), digest, &len, EVP_sha256(), nullptr))
    throw std::runtime_error("SHA-256 failed");
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace rgpu::fatbin
