// rgpu-server: accepts clients and hands each to a pre-started worker.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/log.hpp"
#include "protocol/wire.hpp"
#include "server/daemon/drain_command.hpp"
#ifdef RGPU_METRICS
#include "server/daemon/metrics_endpoint.hpp"
#endif
#include "server/daemon/mps_daemons.hpp"
#include "server/daemon/refusals.hpp"
#include "server/daemon/server_config.hpp"
#include "server/daemon/worker_pool.hpp"
#include "server/worker/module_cache.hpp"
#include "server/worker/ipc_records.hpp"
#include "transport/shm/unix_address.hpp"
#include "transport/transport.hpp"

namespace {
volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }
// SIGUSR1: drain (WorkerPool::drain), then stop once no session is left.
volatile sig_atomic_t g_drain = 0;
void on_drain_signal(int) { g_drain = 1; }

constexpr int kAcceptsPerPass = 64;

bool readable_now(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

// Time for the error a broken MPS server gave its sessions to reach their
// clients before their workers are stopped.
constexpr std::chrono::milliseconds kMpsStopGrace{2000};

// A broken MPS server takes no new client until every old one has exited:
// every worker goes, then the daemon restarts, then workers start anew
// (clients wait in the queue meanwhile). False when it cannot restart.
bool keep_mps_serving(rgpu::server::MpsDaemons& mps, rgpu::server::WorkerPool& pool) {
  if (!pool.holding()) {
    if (mps.broken()) pool.stop_all_workers("the GPU's MPS server is lost to its sessions", kMpsStopGrace);
    return true;
  }
  if (!pool.stopped()) return true;
  if (!mps.restart()) return false;
  pool.resume();
  pool.top_up();
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace rgpu;
  server::ServerConfig config;
  try {
    if (!server::parse_server_args(argc, argv, &config)) return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "rgpu-server: %s\n", e.what());
    return 2;
  }
  if (config.drain)
    return server::drain_running_server(config.port, config.listen, config.drain_move_to, config.job_key_file);
  log::set_prefix("rgpu-server");
  if (!log::set_level(config.log_level)) {
    fprintf(stderr, "rgpu-server: unknown log level '%s'\n", config.log_level.c_str());
    return 2;
  }
  if (std::string why;
      !config.module_cache.empty() && !server::ModuleCache::prepare_directory(config.module_cache, &why)) {
    RGPU_LOG(warn, "module cache %s unusable, the cache is off: %s", config.module_cache.c_str(), why.c_str());
    config.module_cache.clear();
  }
  // Said once here rather than by every worker that would try to load it.
  if (config.ucx_port && transport::ucx_module_path().empty()) {
    RGPU_LOG(error, "--ucx-port %d: rgpu was built without the ucx transport (no UCX found at build time: "
             "see docs/ucx.md); not serving ucx", config.ucx_port);
    config.ucx_port = 0;
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  struct sigaction drain_sa{};
  drain_sa.sa_handler = on_drain_signal;
  sigaction(SIGUSR1, &drain_sa, nullptr);

  std::vector<std::unique_ptr<transport::Listener>> listeners;
  const bool tls = !config.tls.certificate.empty();
  try {
    // Unusable certificate files stop the server here, not in each worker.
    if (tls) transport::make_tls_server_transport(config.tls);
    listeners.push_back(transport::make_tcp_transport()->listen(
        transport::Endpoint{config.listen, static_cast<uint16_t>(config.port)}));
    // A plain TCP listener: the worker that takes the connection sets up
    // UCX on it (the daemon never loads UCX, whose state must not be forked).
    if (config.ucx_port)
      listeners.push_back(transport::make_tcp_transport()->listen(
          transport::Endpoint{config.listen, static_cast<uint16_t>(config.ucx_port)}));
    if (!config.unix_socket.empty()) {
      listeners.push_back(transport::make_shm_transport()->listen(transport::Endpoint{config.unix_socket, 0}));
      // The file mode says who on this host may connect (an abstract name
      // has none: anyone on the host may).
      if (!transport::is_abstract(config.unix_socket) &&
          chmod(config.unix_socket.c_str(), config.unix_socket_mode) != 0)
        throw std::runtime_error("cannot set the mode of " + config.unix_socket + ": " + strerror(errno));
    }
  } catch (const std::exception& e) {
    RGPU_LOG(error, "%s", e.what());
    return 1;
  }
  // After the listeners: a second server on this port stops above, before
  // it would empty the first one's records.
  if (std::string why = server::prepare_ipc_directory(config.ipc_dir); !why.empty()) {
    RGPU_LOG(error, "--ipc-dir: %s", why.c_str());
    return 1;
  }
  // A connection reset between poll and accept must not block the loop.
  for (auto& l : listeners) fcntl(l->native_handle(), F_SETFL, fcntl(l->native_handle(), F_GETFL) | O_NONBLOCK);
  if (config.token.empty() && config.tls.peer_ca.empty() && config.listen != "127.0.0.1" && config.listen != "::1" && config.listen != "localhost")
    RGPU_LOG(warn, "listening on %s with no token: any host that reaches port %d may use the GPUs "
                   "(give --token-file or --tls-client-ca)", config.listen.c_str(), config.port);
  RGPU_LOG(info, "listening on %s:%d%s%s%s%s, backend %s, %d pre-started workers", config.listen.c_str(), config.port,
           tls ? " (TLS)" : "", config.unix_socket.empty() ? "" : " and ", config.unix_socket.c_str(),
           config.ucx_port ? (", ucx on port " + std::to_string(config.ucx_port)).c_str() : "", config.backend.c_str(),
           config.workers);
  server::JobLedger ledger;
  server::ServerCounters counters;
  // Before any worker forks: each inherits the pipe directory, and its CUDA
  // context becomes a client of the GPU's MPS server, which shows it its GPU
  // as device 0; NVIDIA's clients must not set CUDA_VISIBLE_DEVICES.
  server::MpsDaemons mps(config, counters);
  mps.start();
  for (int g : config.gpus)
    if (std::string pipe = mps.pipe_directory(g); !pipe.empty()) {
      setenv("CUDA_MPS_PIPE_DIRECTORY", pipe.c_str(), 1);
      unsetenv("CUDA_VISIBLE_DEVICES");
    }
  server::WorkerPool pool(config, ledger, counters);
  pid_t metrics = -1;
#ifdef RGPU_METRICS
  if (config.metrics_port)
    metrics =
        server::start_metrics_endpoint(config.listen, config.metrics_port, config.metrics_token, config.job_key, ledger,
                                       counters);
#else
  if (config.metrics_port) {
    RGPU_LOG(error, "--metrics-port: this rgpu-server was built without cpp-httplib");
    return 2;
  }
#endif
  server::Refusals refusals;
  pool.top_up();
  while (!g_stop) {
    std::vector<pollfd> fds;
    for (auto& l : listeners) fds.push_back({l->native_handle(), POLLIN, 0});
    const size_t first_refused = fds.size();
    for (int fd : refusals.descriptors()) fds.push_back({fd, POLLIN, 0});
    const size_t first_channel = fds.size();
    for (int ch : pool.channels()) fds.push_back({ch, POLLIN, 0});
    int n = poll(fds.data(), fds.size(), 500);
    if (g_drain && !pool.draining()) {
      RGPU_LOG(info, "draining (SIGUSR1): no new sessions; stopping once the serving ones have ended");
      pool.drain("this server is draining: it takes no new sessions (its operator sent SIGUSR1)");
    }
    pool.reap();
    if (pool.drained()) {
      RGPU_LOG(info, "drained: no session left; stopping");
      break;
    }
    pool.stop_due_workers();
    if (!keep_mps_serving(mps, pool)) {
      RGPU_LOG(error, "stopping: the MPS daemon cannot restart, and workers would be MPS clients of none");
      g_stop = 1;
    }
    pool.enforce_hello_deadlines();
    refusals.expire();
    if (n <= 0) continue;
    for (size_t i = 0; i < listeners.size(); ++i) {
      // A burst of connections is taken in one pass (a few at a time, so
      // that workers and the other listeners are served meanwhile).
      for (int taken = 0; taken < kAcceptsPerPass && readable_now(fds[i].fd); ++taken) {
        try {
          auto conn = listeners[i]->accept();
          int fd = dup(conn->native_handle());
          const std::string peer = conn->peer();
          conn.reset();
          if (std::string kind, why = pool.hand_off(fd, &kind); !why.empty())
            refusals.refuse(fd, kind, why);
          else
            RGPU_LOG(info, "client %s connected", peer.c_str());
        } catch (const std::exception& e) {
          RGPU_LOG(warn, "%s", e.what());
          break;
        }
      }
    }
    for (size_t i = first_refused; i < first_channel; ++i)
      if (fds[i].revents) refusals.on_readable(fds[i].fd);
    for (size_t i = first_channel; i < fds.size(); ++i)
      if (fds[i].revents) pool.on_channel_readable(fds[i].fd);
    std::string unservable;
    for (int fd : pool.take_unservable(&unservable))
      refusals.refuse(fd, pool.draining() ? "draining" : "no worker starts", unservable);
    pool.top_up();
  }
  RGPU_LOG(info, "shutting down");
  pool.shutdown();
  server::remove_ipc_directory();
  if (metrics > 0) kill(metrics, SIGTERM);
  return 0;
}
