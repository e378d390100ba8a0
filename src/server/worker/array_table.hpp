// The CUDA arrays and mipmapped arrays a session created, by backend handle,
// with what the worker needs to check copies and descriptors against them.
// The threads serving one session's connections share it.
#pragma once
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

}  // namespace rgpu::server
