#include "server/pool/memory_limit.hpp"

#include "common/log.hpp"

namespace rgpu::server {

bool MemoryLimit::hold(uint64_t bytes, const char* what) {
  std::lock_guard lock(mutex_);
  if (limit_ && (bytes > limit_ || held_ > limit_ - bytes)) {
    RGPU_LOG(warn, "%llu bytes of %s refused: the session holds %llu of its %s %llu",
             static_cast<unsigned long long>(bytes), what, static_cast<unsigned long long>(held_), setting_,
             static_cast<unsigned long long>(limit_));
    return false;
  }
  held_ += bytes;
  return true;
}

void MemoryLimit::give_back(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  held_ -= bytes;
}

uint64_t MemoryLimit::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

}  // namespace rgpu::server
