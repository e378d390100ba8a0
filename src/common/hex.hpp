// Bytes as lower-case hexadecimal text: hashes and macs in names and
// credentials.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace rgpu {

std::string hex(std::span<const uint8_t> bytes);

}  // namespace rgpu
