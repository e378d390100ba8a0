#include "server/worker/peer_warnings.hpp"

#include <cstdarg>
#include <cstdio>

#include "common/log.hpp"

namespace rgpu::server {

bool PeerWarnings::allow(std::string_view kind, uint64_t* held_back, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = kinds_.find(kind);
  // Kinds are the server's own few strings: the map stays small.
  if (it == kinds_.end()) it = kinds_.emplace(std::string(kind), Kind{}).first;
  Kind& k = it->second;
  *held_back = 0;
  if (++k.seen <= first_ || now - k.last_logged >= period_) {
    *held_back = k.held_back;
    k.held_back = 0;
    k.last_logged = now;
    return true;
  }
  ++k.held_back;
  return false;
}

std::string PeerWarnings::note(uint64_t held_back) {
  return held_back ? " (" + std::to_string(held_back) + " more like it not logged)" : "";
}

void PeerWarnings::warn(std::string_view kind, const char* format, ...) {
  uint64_t held_back;
  if (!allow(kind, &held_back)) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  RGPU_LOG(warn, "%s%s", text, note(held_back).c_str());
}

}  // namespace rgpu::server
