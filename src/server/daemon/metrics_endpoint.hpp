// `rgpu-server --metrics-port`: Prometheus metrics over HTTP (cpp-httplib),
// served by a process of its own forked from the daemon, so that the
// daemon, which forks workers, keeps a single thread. It reads the ledger
// and counters the workers share.
#pragma once
#include <sys/types.h>

#include <string>

#include "server/pool/job_ledger.hpp"
#include "server/pool/server_counters.hpp"

namespace rgpu::server {
// Starts the metrics process, which listens on address:port (and logs why
// not, then exits); its pid, or -1 when it could not be forked. With a
// token, a scrape must send it as "Authorization: Bearer TOKEN" (else 401).
// With a job key it also takes the scheduler's requests (admin_routes.hpp).
pid_t start_metrics_endpoint(const std::string& address, int port, const std::string& token,
                             const std::string& job_key, JobLedger& ledger, ServerCounters& counters);
}
