// Rate limit for warnings a peer can trigger at will (unknown calls,
// oversized or malformed frames, refused joins): a flood of them must not
// flood the server's log. The first few of each kind are logged, then one
// line per period says how many more came.
#pragma once
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/log.hpp"

namespace rgpu::server {

class PeerWarnings {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PeerWarnings(uint64_t first = 5, Clock::duration period = std::chrono::seconds(10))
      : first_(first), period_(period) {}

  // Whether to log this warning of `kind`; when it is logged after others
  // were held back, *held_back says how many (else 0).
  bool allow(std::string_view kind, uint64_t* held_back, Clock::time_point now = Clock::now());
  // " (N more like it not logged)" or "".
  static std::string note(uint64_t held_back);
  // Logs the printf-style line of `kind` at `level` where allow() lets it,
  // with the note of how many were held back; warn() at warn level.
  void log(log::Level level, std::string_view kind, const char* format, ...) __attribute__((format(printf, 4, 5)));
  void warn(std::string_view kind, const char* format, ...) __attribute__((format(printf, 3, 4)));

 private:
  void vlog(log::Level level, std::string_view kind, const char* format, va_list args);

  struct Kind {
    uint64_t seen = 0;
    uint64_t held_back = 0;
    Clock::time_point last_logged{};
  };
  const uint64_t first_;
  const Clock::duration period_;
  std::mutex mutex_;
  std::map<std::string, Kind, std::less<>> kinds_;
};

}  // namespace rgpu::server
