// rgpu-server settings: from a config file (key = value lines, the same keys
// as the flags), then from flags, which win.
#pragma once
#include <string>
#include <vector>

#include "server/pool/job_ledger.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

struct ServerConfig {
  // This host only unless told otherwise: nothing is open to the network by
  // default.
  std::string listen = "127.0.0.1";
  int port = 18515;
  // Clients over UCX meet their worker on this TCP port first (0: off).
  int ucx_port = 0;
  std::vector<int> gpus;  // empty: every GPU the backend sees
  int workers = 2;        // pre-forked, CUDA already initialised
  std::string backend = "cuda";
  std::string log_level = "info";
  std::string module_cache;
  std::string token;  // from token-file; empty: no authentication
  // Unix socket for clients on this host (shm transport); "none" disables.
  std::string unix_socket;
  // Who may connect to it: its file mode (default: the server's user only).
  unsigned unix_socket_mode = 0600;
  // The scheduler side's key (job-key-file); set: every session needs a job
  // credential for its GPUs.
  std::string job_key;
  std::vector<GpuMode> gpu_modes;  // by ordinal, from gpu-mode GPU=MODE; beyond: shared
  int metrics_port = 0;            // Prometheus metrics over HTTP on the listen address; 0: none
  // With a certificate and key the tcp listener speaks TLS only; with
  // peer_ca (tls-client-ca) every client must present a certificate it
  // signed.
  transport::TlsSettings tls;
};

// Parses argv; throws std::invalid_argument with a message for the user.
// Returns false when --help was asked for (usage already printed).
bool parse_server_args(int argc, char** argv, ServerConfig* config);

}  // namespace rgpu::server
