// The server's metrics in Prometheus's text exposition format: sessions,
// calls and errors by op, bytes moved by direction and transport, GPU
// memory per job, GPU utilisation (NVML, where the workers saw a real GPU).
#pragma once
#include <string>

#include "server/pool/job_ledger.hpp"
#include "server/pool/server_counters.hpp"

namespace rgpu::server {
std::string prometheus_text(JobLedger& ledger, const ServerCounters& counters);
}
