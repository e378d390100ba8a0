// How long a receiver polls for data before it sleeps in the kernel. A
// request's reply (or a client's next request) usually follows within a few
// microseconds; waking a sleeping thread costs about as much again, on each
// side. Pollers yield the core to any other runnable thread. RGPU_POLL_US
// sets the window (0: never poll); by default it follows how crowded the
// host's CPUs are (default_poll_window).
#pragma once
#include <chrono>

namespace rgpu::transport {

std::chrono::nanoseconds poll_window();

// The default window while `runnable` threads (on average) are runnable on
// a host whose CPUs this process may use number `cpus`: long while they fill
// at most 2/3 of the CPUs; short once pollers crowd them. 16 tenants of one
// GPU, each a client and a worker polling, on 32 cores (26 runnable): with
// the long window some tenants kept their core and others waited a wake-up
// each step, 40 000 steps against 26 700; with the short one every tenant
// made 32 500. 8 tenants (17 runnable) run faster with the long one.
std::chrono::nanoseconds default_poll_window(unsigned runnable, unsigned cpus);

}  // namespace rgpu::transport
