// How long a receiver polls for data before it sleeps in the kernel. A
// request's reply (or a client's next request) usually follows within a few
// microseconds; waking a sleeping thread costs about as much again, on each
// side. Pollers yield the core to any other runnable thread. RGPU_POLL_US
// sets the window (0: never poll).
#pragma once
#include <chrono>

namespace rgpu::transport {

std::chrono::nanoseconds poll_window();

}  // namespace rgpu::transport
