#include "server/daemon/metrics_endpoint.hpp"

#include <httplib.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "common/log.hpp"
#include "server/daemon/admin_routes.hpp"
#include "server/pool/prometheus_text.hpp"

namespace rgpu::server {
namespace {

// Connections served at once, each by a thread of its own (the process
// may open no more descriptors, so none waits for a thread): one that
// sends nothing waits in the kernel (TCP_DEFER_ACCEPT), then holds its
// thread until the read timeout. Past the limit new connections wait in the
// kernel's queue until one ends.
constexpr size_t kMaxConnections = 1024;
constexpr time_t kTimeoutS = 2;
// The admin requests' bodies are a move target: nothing larger is read.
constexpr size_t kMaxBody = 4096;

// At most kMaxConnections accepted at once (and a few for the process's own).
void bound_descriptors() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, kMaxConnections + 16);
  setrlimit(RLIMIT_NOFILE, &lim);
}

}  // namespace

pid_t start_metrics_endpoint(const std::string& address, int port, const std::string& token,
                             const std::string& job_key, JobLedger& ledger, ServerCounters& counters) {
  pid_t pid = fork();
  if (pid < 0) RGPU_LOG(error, "metrics: fork failed");
  if (pid != 0) return pid;
  log::set_prefix("rgpu-metrics");
  close_range(3, ~0u, 0);  // the daemon's listeners are not this process's
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // ends with the daemon
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  bound_descriptors();
  httplib::Server http;
  http.new_task_queue = [] { return new httplib::ThreadPool(kMaxConnections); };
  http.set_read_timeout(kTimeoutS);
  http.set_write_timeout(kTimeoutS);
  http.set_keep_alive_timeout(kTimeoutS);
  http.set_payload_max_length(kMaxBody);
  int listener = -1;
  http.set_socket_options([&listener](socket_t sock) {
    httplib::default_socket_options(sock);
    // A connection that sends nothing stays with the kernel meanwhile, not
    // taking a thread.
    const int defer_s = kTimeoutS;
    setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s);
    listener = sock;
  });
  http.Get("/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    if (!bearer_token_matches(req, token)) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer");
      return;
    }
    res.set_content(prometheus_text(ledger, counters), "text/plain; version=0.0.4");
  });
  add_admin_routes(http, job_key, token, ledger);
  if (!http.bind_to_port(address, port)) {
    RGPU_LOG(error, "metrics: cannot listen on %s:%d", address.c_str(), port);
    _exit(1);
  }
  // cpp-httplib listens with a backlog of 5: past it a connecting client
  // waits a second for its SYN to be sent again.
  if (listener >= 0) listen(listener, SOMAXCONN);
  http.listen_after_bind();
  _exit(0);
}

}  // namespace rgpu::server
