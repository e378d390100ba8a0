#include "transport/poll_window.hpp"

#include <cstdlib>

namespace rgpu::transport {
namespace {
// A synchronize after a few small kernels (a batch-1 inference step) waits
// 60-100 us: a shorter window sleeps through most of them.
constexpr long kDefaultPollUs = 200;
}

std::chrono::nanoseconds poll_window() {
  static const std::chrono::nanoseconds window = [] {
    const char* v = std::getenv("RGPU_POLL_US");
    long us = v ? std::strtol(v, nullptr, 10) : kDefaultPollUs;
    return std::chrono::microseconds(us < 0 ? 0 : us);
  }();
  return window;
}

}  // namespace rgpu::transport
