// Objects whose values each device numbers on its own (texture and surface
// objects are small integers per context): a value counts only together
// with the device that made it. The threads serving one session's
// connections share it.
#pragma once
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

namespace rgpu::server {

class DeviceObjectSet {
 public:
  void add(int device, uint64_t value) {
    std::lock_guard lock(mutex_);
    live_.emplace(device, value);
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
  std::mutex mutex_;
  std::set<std::pair<int, uint64_t>> live_;
};

}  // namespace rgpu::server
