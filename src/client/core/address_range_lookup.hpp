// Finding the range that holds [ptr, ptr + n) in a map keyed by range start,
// whose values have a `size`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace rgpu::client {

template <typename R>
std::optional<R> find_range(const std::map<uint64_t, R>& m, uint64_t ptr, size_t n) {
  auto it = m.upper_bound(ptr);
  if (it == m.begin()) return std::nullopt;
  --it;
  uint64_t offset = ptr - it->first;
  if (offset >= it->second.size || n > it->second.size - offset) return std::nullopt;
  return it->second;
}

}  // namespace rgpu::client
