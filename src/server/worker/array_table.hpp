// The CUDA arrays and mipmapped arrays a session created, by backend handle,
// with what the worker needs to check copies and descriptors against them.
// The threads serving one session's connections share it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "server/backend/array_api.hpp"

namespace rgpu::server {

struct ArrayRecord {
  ArraySpec spec;
  size_t element;      // bytes per element
  uint64_t owner = 0;  // for a level of a mipmapped array: that array (not freed on its own)
  unsigned levels = 0;  // for a mipmapped array: how many it has
};

class ArrayTable {
 public:
  // Arrays held (a move refuses a session holding any).
  size_t size() const {
    std::lock_guard lock(mutex_);
    return records_.size();
  }
  void put(uint64_t h, const ArrayRecord& r) {
    std::lock_guard lock(mutex_);
    records_[h] = r;
  }
  std::optional<ArrayRecord> find(uint64_t h) const {
    std::lock_guard lock(mutex_);
    auto it = records_.find(h);
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }
  bool remove(uint64_t h) {
    std::lock_guard lock(mutex_);
    return records_.erase(h) != 0;
  }
  // Forgets the levels of a mipmapped array that is gone.
  void remove_owned_by(uint64_t owner) {
    std::lock_guard lock(mutex_);
    std::erase_if(records_, [&](const auto& r) { return r.second.owner == owner; });
  }
  void clear() {
    std::lock_guard lock(mutex_);
    records_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, ArrayRecord> records_;
};

// A region of an array: `width` bytes by `height` rows by `depth` slices
// from byte x, row y, slice z (a missing height or depth is 1). Its record,
// or cudaErrorInvalidResourceHandle for an array the session does not have,
// cudaErrorInvalidValue for a region off element bounds or past the array.
inline int32_t check_array_region(const ArrayTable& arrays, uint64_t array, size_t x, size_t y, size_t z, size_t width,
                                  size_t height, size_t depth, ArrayRecord* out) {
  auto r = arrays.find(array);
  if (!r) return cudaErrorInvalidResourceHandle;
  auto fits = [](size_t pos, size_t n, size_t limit) { return pos <= limit && n <= limit - pos; };
  size_t el = r->element;
  const cudaExtent& e = r->spec.extent;
  if (x % el || width % el || !fits(x / el, width / el, e.width) ||
      !fits(y, height, std::max<size_t>(e.height, 1)) || !fits(z, depth, std::max<size_t>(e.depth, 1)))
    return cudaErrorInvalidValue;
  *out = *r;
  return cudaSuccess;
}

}  // namespace rgpu::server
