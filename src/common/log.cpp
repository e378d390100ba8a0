#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <string>

namespace rgpu::log {
namespace {
std::atomic<Level> g_level{Level::warn};
std::string g_prefix = "rgpu";
std::atomic<int> g_fd{STDERR_FILENO};
std::atomic<Sink> g_sink{nullptr};
const char* kNames[] = {"error", "warn", "info", "debug"};
}  // namespace

bool set_level(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kNames[i]) {
      g_level = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

void set_level(Level level) { g_level = level; }
Level level() { return g_level.load(std::memory_order_relaxed); }
void set_prefix(std::string_view prefix) { g_prefix = prefix; }
void set_fd(int fd) { g_fd = fd; }
void set_sink(Sink sink) { g_sink = sink; }

void write(Level level, const char* fmt, ...) {
  char buf[2048];
  int n = snprintf(buf, sizeof buf, "[%s %d %s] ", g_prefix.c_str(), getpid(),
                   kNames[static_cast<int>(level)]);
  const int prefix = n;
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
  va_end(ap);
  if (n > static_cast<int>(sizeof buf) - 2) n = sizeof buf - 2;
  if (Sink sink = g_sink.load()) sink(level, buf + prefix, n - prefix);
  buf[n++] = '\n';
  // One write() so lines from concurrent processes do not interleave.
  ssize_t ignored = ::write(g_fd.load(std::memory_order_relaxed), buf, n);
  (void)ignored;
}

}  // namespace rgpu::log
