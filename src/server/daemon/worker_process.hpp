// What a forked worker does: load the backend, initialise the GPUs, report
// ready, then serve the one connection the daemon hands over. Never returns.
#pragma once
#include "server/daemon/server_config.hpp"

namespace rgpu::server {
[[noreturn]] void run_worker(const ServerConfig& config, int channel);
}
