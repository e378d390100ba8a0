#include "server/daemon/worker_process.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/log.hpp"
#include "server/backend/backend.hpp"
#include "server/daemon/fd_passing.hpp"
#include "server/pool/nvml_utilization.hpp"
#include "server/worker/hello_deadline.hpp"
#include "server/worker/session_loop.hpp"

namespace rgpu::server {
namespace {

// Whether the daemon accepted `fd` on its ucx port.
bool reached_ucx_port(int fd, int ucx_port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (ucx_port == 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port) == ucx_port;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port) == ucx_port;
  return false;
}

// Tells the daemon why this worker cannot start, so that it can turn its
// waiting clients away with the reason instead of letting them wait.
[[noreturn]] void fail_start(int channel, const std::string& why) {
  RGPU_LOG(error, "%s", why.c_str());
  const std::string message = "f" + why;
  [[maybe_unused]] ssize_t sent = write(channel, message.data(), message.size());
  _exit(2);
}

}  // namespace

void run_worker(const ServerConfig& config, JobLedger& ledger, ServerCounters& counters, int channel) {
  log::set_prefix("rgpu-worker");
  // For the backend's NCCL, loaded at an application's first NCCL call.
  if (!config.nccl_library.empty()) setenv("RGPU_NCCL_LIBRARY", config.nccl_library.c_str(), 1);
  for (const auto& [name, value] : config.nccl_env) setenv(name.c_str(), value.c_str(), 1);
  if (const char* mps = getenv("CUDA_MPS_PIPE_DIRECTORY"))
    RGPU_LOG(debug, "an MPS client of %s, CUDA_VISIBLE_DEVICES %s", mps,
             getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
  std::string why;
  std::unique_ptr<Backend> backend = make_backend(config.backend, &why);
  if (!backend) fail_start(channel, "cannot load backend '" + config.backend + "': " + why);
  SessionLimits limits{config.gpus, config.module_cache, config.token,
                       {config.job_key, static_cast<uint16_t>(config.port), config.gpu_modes, &ledger}, &counters};
    limits.admission_channel = channel;
  limits.max_connections = config.max_session_connections;
  limits.max_frame_bytes = config.max_frame_bytes;
  limits.max_memory = config.max_session_memory;
  limits.max_host_memory = config.max_session_host_memory;
  limits.bounds = config.bounds;
  limits.idle_timeout_s = config.idle_timeout_s;
  limits.peer_timeout_s = config.peer_timeout_s;
  limits.ipc_sharing = config.ipc_sharing;
  limits.hello_timeout_s = config.hello_timeout_s;
  if (limits.exported_gpus.empty()) {
    int n = 0;
    backend->device_count(&n);
    for (int i = 0; i < n; ++i) limits.exported_gpus.push_back(i);
  }
  // MPS reads a client's share once, as its CUDA starts: a worker whose
  // session may bring one (credentials carry shares) starts CUDA after
  // admission, and pays the context creation then.
  limits.cuda_after_admission = getenv("CUDA_MPS_PIPE_DIRECTORY") && !config.job_key.empty();
  if (limits.cuda_after_admission) RGPU_LOG(debug, "CUDA starts once the session's compute share is known");
  else if (int32_t e = backend->init(limits.exported_gpus))
    fail_start(channel, "backend '" + config.backend + "' cannot initialise the GPUs: " + backend->error_string(e));
  // The daemon's metrics ask NVML for utilisation by bus id, which the
  // first worker to start finds.
  for (int g : limits.exported_gpus) {
    cudaDeviceProp prop;
    if (!limits.cuda_after_admission && backend->name() == "cuda" && counters.bus_id(g).empty() &&
        backend->get_device_properties(&prop, g) == cudaSuccess)
      counters.set_bus_id(g, pci_bus_id(prop));
  }
  // Connections on the tcp port speak TLS when the server has a certificate;
  // the handshake happens here, in the worker, never in the daemon.
  std::unique_ptr<transport::Transport> network;
  try {
    network = config.tls.certificate.empty() ? transport::make_tcp_transport()
                                             : transport::make_tls_server_transport(config.tls);
  } catch (const transport::TransportError& e) {
    fail_start(channel, e.what());
  }
  // UCX starts here, before a client waits for it.
  std::unique_ptr<transport::Transport> ucx;
  if (config.ucx_port) {
    try {
      ucx = transport::make_ucx_transport();
    } catch (const std::exception& e) {
      RGPU_LOG(error, "%s", e.what());
    }
  }
  char ready = 'r';
  if (write(channel, &ready, 1) != 1) _exit(0);
  // The channel stays open: the session asks the daemon for admission.
  int fd = recv_fd(channel);
  if (fd < 0) _exit(0);
  // From here until the session is admitted the peer has proved nothing:
  // adoption, a TLS handshake, the hello and admission all fit in one
  // deadline (the daemon kills a worker that overstays it).
  HelloDeadline hello(fd, std::chrono::seconds(config.hello_timeout_s));
  std::unique_ptr<transport::Connection> conn;
  try {
    if (!reached_ucx_port(fd, config.ucx_port)) conn = transport::adopt_socket(fd, *network);
    else if (ucx) conn = ucx->adopt(fd);
    else RGPU_LOG(error, "a ucx client, but UCX did not start: session refused");
  } catch (const std::exception& e) {
    RGPU_LOG(warn, "cannot set up the session's connection: %s", e.what());
  }
  if (conn) serve_session(*backend, *conn, limits, &hello);
  hello.disarm();
  conn.reset();
  backend.reset();
  _exit(0);
}

}  // namespace rgpu::server
