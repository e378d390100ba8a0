#include "transport/poll_window.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace rgpu::transport {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;
using Clock = std::chrono::steady_clock;

// A synchronize after a few small kernels (a batch-1 inference step) waits
// 60-100 us: a shorter window sleeps through most of them.
constexpr microseconds kRoomyWindow{200};
// Enough for a small call's reply; measured fair at 16 tenants on 32 cores.
constexpr microseconds kCrowdedWindow{50};
// How often the host's runnable threads are counted again; the window
// follows their moving average over about 8 counts, so that one count
// near the bound does not flip it.
constexpr nanoseconds kRecount = std::chrono::milliseconds(10);
constexpr int64_t kAverageOver = 8;

// Threads runnable on the host now: /proc/loadavg's fourth field, "R/T".
unsigned runnable_threads() {
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  unsigned runnable = 0;
  if (n <= 0 || std::sscanf(text, "%*f %*f %*f %u/", &runnable) != 1) return 0;
  return runnable;
}

unsigned usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

}  // namespace

nanoseconds default_poll_window(unsigned runnable, unsigned cpus) {
  return runnable * 3 > cpus * 2 ? nanoseconds(kCrowdedWindow) : nanoseconds(kRoomyWindow);
}

nanoseconds poll_window() {
  static const long configured = [] {
    const char* v = std::getenv("RGPU_POLL_US");
    if (!v) return -1L;
    long us = std::strtol(v, nullptr, 10);
    return us < 0 ? 0L : us;
  }();
  if (configured >= 0) return microseconds(configured);
  static const unsigned cpus = usable_cpus();
  static std::atomic<int64_t> window_ns{nanoseconds(kRoomyWindow).count()};
  static std::atomic<int64_t> recount_at{0};
  static std::atomic<int64_t> average_x256{0};  // runnable threads, in 256ths
  const int64_t now = std::chrono::duration_cast<nanoseconds>(Clock::now().time_since_epoch()).count();
  int64_t due = recount_at.load(std::memory_order_relaxed);
  // One thread recounts; the others go on with the last window.
  if (now >= due && recount_at.compare_exchange_strong(due, now + kRecount.count(), std::memory_order_relaxed)) {
    int64_t average = average_x256.load(std::memory_order_relaxed);
    average += (int64_t{runnable_threads()} * 256 - average) / kAverageOver;
    average_x256.store(average, std::memory_order_relaxed);
    window_ns.store(default_poll_window(static_cast<unsigned>((average + 128) / 256), cpus).count(),
                    std::memory_order_relaxed);
  }
  return nanoseconds(window_ns.load(std::memory_order_relaxed));
}

}  // namespace rgpu::transport
