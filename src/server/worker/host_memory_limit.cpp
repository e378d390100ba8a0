#include "server/worker/host_memory_limit.hpp"

#include "common/log.hpp"

namespace rgpu::server {

bool HostMemoryLimit::hold(uint64_t bytes, const char* what) {
  std::lock_guard lock(mutex_);
  if (limit_ && (bytes > limit_ || held_ > limit_ - bytes)) {
    RGPU_LOG(warn, "%llu bytes of %s refused: the session holds %llu bytes of page-locked memory of its "
                   "max-session-host-memory %llu",
             static_cast<unsigned long long>(bytes), what, static_cast<unsigned long long>(held_),
             static_cast<unsigned long long>(limit_));
    return false;
  }
  held_ += bytes;
  return true;
}

void HostMemoryLimit::give_back(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  held_ -= bytes;
}

}  // namespace rgpu::server
