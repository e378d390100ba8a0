// The backend handles (streams, events, modules, functions) a session
// created; a handle from the wire is used only if it is in its set. The
// threads serving one session's connections share it.
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_set>

namespace rgpu::server {

class HandleSet {
 public:
  void add(uint64_t h) {
    std::lock_guard lock(mutex_);
    live_.insert(h);
  }
  bool remove(uint64_t h) {
    std::lock_guard lock(mutex_);
    return live_.erase(h) != 0;
  }
  bool contains(uint64_t h) const {
    std::lock_guard lock(mutex_);
    return live_.count(h) != 0;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    live_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<uint64_t> live_;
};

}  // namespace rgpu::server
