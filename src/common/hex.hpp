// Bytes as lower-case hexadecimal text: hashes and macs in names and
// credentials.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rgpu {

std::string hex(std::span<const uint8_t> bytes);
// hex's inverse (either case); nothing when the text is not whole bytes of
// hexadecimal digits.
std::optional<std::vector<uint8_t>> from_hex(std::string_view text);

}  // namespace rgpu
