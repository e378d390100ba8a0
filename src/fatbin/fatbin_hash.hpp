// Content hash of a fat binary: names it in the server's module cache, so
// the client can skip shipping an image the server already holds.
#pragma once
#include <cstddef>
#include <span>
#include <string>

namespace rgpu::fatbin {

// XXH3-128 of the bytes as 32 lowercase hex digits. Not cryptographic: the
// server re-hashes what it receives and what it reads from its cache.
std::string fatbin_hash(std::span<const std::byte> image);

}  // namespace rgpu::fatbin
