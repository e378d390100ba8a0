// Objects whose values each device numbers on its own (texture and surface
// objects are small integers per context): a value counts only together
// with the device that made it. The threads serving one session's
// connections share it.
#pragma once
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "server/pool/count_limit.hpp"

namespace rgpu::server {

class DeviceObjectSet {
 public:
  // `what`: the objects, for the log when set_limit's bound refuses one.
  explicit DeviceObjectSet(const char* what) : limit_(what, "max-session-objects") {}
  void set_limit(uint64_t n) { limit_.set_limit(n); }
  // False (logged once) when the set is full: asked before making one.
  bool room_for_one_more() {
    return limit_.room_for_one_more(mutex_, live_);
  }
  void add(int device, uint64_t value) {
    std::lock_guard lock(mutex_);
    live_.emplace(device, value);
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }
  bool remove(int device, uint64_t value) {
    std::lock_guard lock(mutex_);
    return live_.erase({device, value}) != 0;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    live_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::pair<int, uint64_t>> live_;
  CountLimit limit_;
};

}  // namespace rgpu::server
