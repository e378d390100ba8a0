#include "server/daemon/metrics_endpoint.hpp"

#include <httplib.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <vector>

#include "common/log.hpp"
#include "protocol/auth.hpp"
#include "server/pool/prometheus_text.hpp"

namespace rgpu::server {
namespace {

// Connections served at once, each by a thread of its own: idle ones (a
// client that connects and sends nothing) hold theirs only until the read
// timeout, and a scrape finds a free one while fewer than this are open.
constexpr size_t kMaxConnections = 256;
constexpr time_t kTimeoutS = 2;

// Whether the request carries "Authorization: Bearer <token>" (compared in
// constant time).
bool authorized(const httplib::Request& req, const std::string& token) {
  const std::string header = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.compare(0, prefix.size(), prefix) != 0) return false;
  std::vector<uint8_t> given(header.begin() + prefix.size(), header.end());
  return proto::same_secret(given, std::vector<uint8_t>(token.begin(), token.end()));
}

}  // namespace

pid_t start_metrics_endpoint(const std::string& address, int port, const std::string& token, JobLedger& ledger,
                             ServerCounters& counters) {
  pid_t pid = fork();
  if (pid < 0) RGPU_LOG(error, "metrics: fork failed");
  if (pid != 0) return pid;
  log::set_prefix("rgpu-metrics");
  close_range(3, ~0u, 0);  // the daemon's listeners are not this process's
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with the daemon
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  httplib::Server http;
  http.new_task_queue = [] { return new httplib::ThreadPool(kMaxConnections); };
  http.set_read_timeout(kTimeoutS);
  http.set_write_timeout(kTimeoutS);
  http.set_keep_alive_timeout(kTimeoutS);
  http.Get("/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    if (!token.empty() && !authorized(req, token)) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer");
      return;
    }
    res.set_content(prometheus_text(ledger, counters), "text/plain; version=0.0.4");
  });
  if (!http.listen(address, port)) {
    RGPU_LOG(error, "metrics: cannot listen on %s:%d", address.c_str(), port);
    _exit(1);
  }
  _exit(0);
}

}  // namespace rgpu::server
