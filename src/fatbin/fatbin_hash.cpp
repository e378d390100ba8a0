#include "fatbin/fatbin_hash.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "common/hex.hpp"

namespace rgpu::fatbin {

std::string fatbin_hash(std::span<const std::byte> image) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(image.data(), image.size(), digest, &len, EVP_sha256(), nullptr))
    throw std::runtime_error("SHA-256 failed");
  return hex({digest, len});
}

}  // namespace rgpu::fatbin
