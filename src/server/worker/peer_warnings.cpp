#include "server/worker/peer_warnings.hpp"

#include <cstdio>


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

void PeerWarnings::vlog(log::Level level, std::string_view kind, const char* format, va_list args) {
  uint64_t held_back;
  if (!allow(kind, &held_back) || static_cast<int>(level) > static_cast<int>(log::level())) return;
  char text[1024];
  vsnprintf(text, sizeof text, format, args);
  log::write(level, "%s%s", text, note(held_back).c_str());
}

void PeerWarnings::log(log::Level level, std::string_view kind, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vlog(level, kind, format, args);
  va_end(args);
}

void PeerWarnings::warn(std::string_view kind, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vlog(log::Level::warn, kind, format, args);
  va_end(args);
}

}  // namespace rgpu::server
