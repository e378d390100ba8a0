// Modules loaded ahead of a session that moves here (docs/migration.md): a
// large image takes hundreds of milliseconds to load, which the session's
// pause need not wait for. Each is kept under the hash this worker computed
// of its image; the session's next load of that image (by hash) takes it.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rgpu::server {

class PreloadedModules {
 public:
  void put(const std::string& hash, uint64_t module) {
    std::lock_guard lock(mutex_);
    modules_.emplace(hash, module);
  }
  // One module loaded from that image, no longer kept here; 0 when none is.
  uint64_t take(const std::string& hash) {
    std::lock_guard lock(mutex_);
    auto it = modules_.find(hash);
    if (it == modules_.end()) return 0;
    const uint64_t module = it->second;
    modules_.erase(it);
    return module;
  }
  // A device reset unloaded them.
  void clear() {
    std::lock_guard lock(mutex_);
    modules_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_multimap<std::string, uint64_t> modules_;
};

}  // namespace rgpu::server
