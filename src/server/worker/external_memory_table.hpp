// The external memory objects a session imported, by backend handle, with
// their sizes: buffers and mipmapped arrays are mapped only from a live
// object and only inside it. The threads serving one session's connections
// share it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "server/pool/count_limit.hpp"

namespace rgpu::server {

class ExternalMemoryTable {
 public:
  // Imported external memories.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return sizes_.size();
  }
  void set_limit(uint64_t n) { limit_.set_limit(n); }
  // False (logged once) when the table is full: asked before importing.
  bool room_for_one_more() {
    return limit_.room_for_one_more(mutex_, sizes_);
  }
  void add(uint64_t h, size_t size) {
    std::lock_guard lock(mutex_);
    sizes_[h] = size;
  }
  std::optional<size_t> size_of(uint64_t h) const {
    std::lock_guard lock(mutex_);
    auto it = sizes_.find(h);
    if (it == sizes_.end()) return std::nullopt;
    return it->second;
  }
  bool remove(uint64_t h) {
    std::lock_guard lock(mutex_);
    return sizes_.erase(h) != 0;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    sizes_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, size_t> sizes_;
  CountLimit limit_{"external memories", "max-session-objects"};
};

}  // namespace rgpu::server
