// Content hash of a fat binary: names it in the server's module cache.
#pragma once
#include <cstddef>
#include <span>
#include <string>

namespace rgpu::fatbin {

// SHA-256 as 64 lowercase hex digits.
std::string fatbin_hash(std::span<const std::byte> image);

}  // namespace rgpu::fatbin
