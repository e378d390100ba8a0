// The backend handles (streams, events, modules, functions) a session
// created; a handle from the wire is used only if it is in its set.
#pragma once
#include <cstdint>
#include <unordered_set>

namespace rgpu::server {

class HandleSet {
 public:
  void add(uint64_t h) { live_.insert(h); }
  bool remove(uint64_t h) { return live_.erase(h) != 0; }
  bool contains(uint64_t h) const { return live_.count(h) != 0; }
  void clear() { live_.clear(); }
  template <typename F>
  void for_each(F&& f) const {
    for (uint64_t h : live_) f(h);
  }

 private:
  std::unordered_set<uint64_t> live_;
};

}  // namespace rgpu::server
