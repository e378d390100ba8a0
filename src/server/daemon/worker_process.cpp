#include "server/daemon/worker_process.hpp"

#include <unistd.h>

#include <memory>

#include "common/log.hpp"
#include "server/backend/backend.hpp"
#include "server/daemon/fd_passing.hpp"
#include "server/worker/session_loop.hpp"

namespace rgpu::server {

void run_worker(const ServerConfig& config, int channel) {
  log::set_prefix("rgpu-worker");
  std::string why;
  std::unique_ptr<Backend> backend = make_backend(config.backend, &why);
  if (!backend) {
    RGPU_LOG(error, "cannot load backend '%s': %s", config.backend.c_str(), why.c_str());
    _exit(2);
  }
  SessionLimits limits{config.gpus, config.module_cache, config.token};
  limits.admission_channel = channel;
  limits.max_connections = config.max_session_connections;
  limits.max_frame_bytes = config.max_frame_bytes;
  limits.max_memory = config.max_session_memory;
  limits.idle_timeout_s = config.idle_timeout_s;
  limits.peer_timeout_s = config.peer_timeout_s;
  if (limits.exported_gpus.empty()) {
    int n = 0;
    backend->device_count(&n);
    for (int i = 0; i < n; ++i) limits.exported_gpus.push_back(i);
  }
  if (int32_t e = backend->init(limits.exported_gpus)) {
    RGPU_LOG(error, "backend '%s' failed to initialise the GPUs (error %d)", config.backend.c_str(), e);
    _exit(2);
  }
  // Connections on the tcp port speak TLS when the server has a certificate;
  // the handshake happens here, in the worker, never in the daemon.
  std::unique_ptr<transport::Transport> network;
  try {
    network = config.tls.certificate.empty() ? transport::make_tcp_transport()
                                             : transport::make_tls_server_transport(config.tls);
  } catch (const transport::TransportError& e) {
    RGPU_LOG(error, "%s", e.what());
    _exit(2);
  }
  char ready = 'r';
  if (write(channel, &ready, 1) != 1) _exit(0);
  // The channel stays open: the session asks the daemon for admission.
  int fd = recv_fd(channel);
  if (fd < 0) _exit(0);
  auto conn = transport::adopt_socket(fd, *network);
  serve_session(*backend, *conn, limits);
  conn.reset();
  backend.reset();
  _exit(0);
}

}  // namespace rgpu::server
