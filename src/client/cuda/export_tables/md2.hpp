// MD2 (RFC 1319): the digest NVIDIA's runtime keys its driver integrity
// check with (integrity_hash.hpp). Not for any other use: MD2 is broken.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace rgpu::client {

class Md2 {
 public:
  void update(const void* data, size_t size);
  // The digest; the object is spent afterwards.
  std::array<uint8_t, 16> finish();

 private:
  void add(uint8_t byte);

  std::array<uint8_t, 48> state_{};
  std::array<uint8_t, 16> checksum_{};
  uint8_t count_ = 0;  // bytes of the current 16-byte block
  uint8_t last_ = 0;   // the checksum byte updated last
};

}  // namespace rgpu::client
