// The backend handles (streams, events, modules, functions) a session
// created; a handle from the wire is used only if it is in its set. The
// threads serving one session's connections share it. A bounded set says
// whether there is room before the handler makes the object.
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "server/pool/count_limit.hpp"

namespace rgpu::server {

class HandleSet {
 public:
  HandleSet() = default;
  // A set bounded by `setting` (set_limit), holding `what` (for the log).
  HandleSet(const char* what, const char* setting) : limit_(what, setting) {}

  void set_limit(uint64_t n) { limit_.set_limit(n); }
  // False (logged once) when the set is full: the handler then makes
  // nothing and answers out-of-memory.
  bool room_for_one_more() { return limit_.room_for_one_more(size()); }
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
  size_t size() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }
  void clear() {
    std::lock_guard lock(mutex_);
    live_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<uint64_t> live_;
  CountLimit limit_{"handles", "limit"};
};

}  // namespace rgpu::server
