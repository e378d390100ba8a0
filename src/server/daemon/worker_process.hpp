// What a forked worker does: load the backend, initialise the GPUs, report
// ready, then serve the one connection the daemon hands over. Never returns.
#pragma once
#include "server/daemon/server_config.hpp"
#include "server/pool/server_counters.hpp"

namespace rgpu::server {
[[noreturn]] void run_worker(const ServerConfig& config, JobLedger& ledger, ServerCounters& counters, int channel);
}
