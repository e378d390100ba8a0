#include "server/daemon/metrics_endpoint.hpp"

#include <httplib.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/log.hpp"
#include "server/pool/prometheus_text.hpp"

namespace rgpu::server {

pid_t start_metrics_endpoint(const std::string& address, int port, JobLedger& ledger, ServerCounters& counters) {
  pid_t pid = fork();
  if (pid < 0) RGPU_LOG(error, "metrics: fork failed");
  if (pid != 0) return pid;
  log::set_prefix("rgpu-metrics");
  close_range(3, ~0u, 0);  // the daemon's listeners are not this process's
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with the daemon
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  httplib::Server http;
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_text(ledger, counters), "text/plain; version=0.0.4");
  });
  if (!http.listen(address, port)) {
    RGPU_LOG(error, "metrics: cannot listen on %s:%d", address.c_str(), port);
    _exit(1);
  }
  _exit(0);
}

}  // namespace rgpu::server
