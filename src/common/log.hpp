// Process-wide logging with levels; shared by client and server.
#pragma once
#include <cstdio>
#include <string_view>

namespace rgpu::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

// Set from a string ("error", "warn", "info", "debug"); false when unknown.
bool set_level(std::string_view name);
void set_level(Level level);
Level level();
void set_prefix(std::string_view prefix);
// Where lines go (default: standard error).
void set_fd(int fd);

// Also hands each line (without its prefix) to `sink`, if set; the client's
// error log (cudaLogs*) keeps them.
using Sink = void (*)(Level level, const char* message, size_t length);
void set_sink(Sink sink);

void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace rgpu::log

#define RGPU_LOG(lvl, ...)                                                   \
  do {                                                                       \
    if (static_cast<int>(::rgpu::log::Level::lvl) <=                         \
        static_cast<int>(::rgpu::log::level()))                              \
      ::rgpu::log::write(::rgpu::log::Level::lvl, __VA_ARGS__);              \
  } while (0)
