// rgpu-server settings: from a config file (key = value lines, the same keys
// as the flags), then from flags, which win.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "server/pool/job_ledger.hpp"
#include "server/pool/session_bounds.hpp"
#include "server/worker/ipc_records.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

// max-session-host-memory when none is configured: a quarter of the host's
// physical memory, so no one session can pin what the host needs, yet a
// graph staging its copies of large pageable buffers fits.
uint64_t default_session_host_memory();

// How sessions share a GPU in shared mode: contexts time-sliced by the
// driver, or clients of an MPS server the server runs for that GPU.
enum class GpuSharing { timeslice, mps };

struct ServerConfig {
  // This host only unless told otherwise: nothing is open to the network by
  // default.
  std::string listen = "127.0.0.1";
  int port = 18515;
  // `--drain`: drain the server on `port` (drain_command.hpp) instead of serving.
  bool drain = false;
  // `--move-to HOST[:PORT][/GPU]` with --drain: every session is asked to
  // move there first (`rgpu migrate --all`, with job-key-file).
  std::string drain_move_to;
  std::string job_key_file;
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
  GpuSharing gpu_sharing = GpuSharing::timeslice;
  std::string mps_control = "nvidia-cuda-mps-control";
  // Private pipe and log directories of each GPU's MPS daemon go under it;
  // empty: the default for the port.
  std::string mps_dir;
  int metrics_port = 0;            // Prometheus metrics over HTTP on the listen address; 0: none
  std::string metrics_token;       // from metrics-token-file; set: scrapes must send it (bearer)
  // Where workers keep CUDA IPC records (ipc_records.hpp); empty: the default
  // for the port. And who may open an exported handle.
  std::string ipc_dir;
  IpcSharing ipc_sharing = IpcSharing::owner;
  // With a certificate and key the tcp listener speaks TLS only; with
  // peer_ca (tls-client-ca) every client must present a certificate it
  // signed.
  transport::TlsSettings tls;
  // NCCL for the applications' NCCL calls (docs/nccl.md): the library the
  // workers load (empty: found by soname, then in pip's usual places), and
  // the environment its server-to-server network takes (NCCL_SOCKET_IFNAME,
  // NCCL_IB_HCA, any NCCL_* of nccl-env NAME=VALUE).
  std::string nccl_library;
  std::vector<std::pair<std::string, std::string>> nccl_env;

  // What one client may take (server_limits in README). 0: no limit.
  int max_sessions = 256;             // sessions at once, all clients together
  int max_sessions_per_client = 64;   // sessions at once of one client identity
  // Connections of one session (one per application thread; each holds at
  // most one request being served, the rest wait in its socket).
  int max_session_connections = 256;
  uint32_t max_frame_bytes = 1u << 20;  // arguments of one request, held in memory
  uint64_t max_session_memory = 0;      // device memory of one session, bytes
  // Page-locked host memory one session may make its worker hold, bytes.
  uint64_t max_session_host_memory = default_session_host_memory();
  // Module image sizes, the module cache's quota, counts of streams, events,
  // modules, graphs and allocations (session_bounds.hpp).
  SessionBounds bounds;
  int idle_timeout_s = 0;               // a session with no call for this long ends
  // A session whose client sent no heartbeat for this long ends, and a
  // client hears from its worker at least this often (0: off).
  int peer_timeout_s = 30;
  // Before authentication (unauthenticated_limits.hpp): the whole hello or
  // join must arrive within this many seconds; connections of one source
  // (host, or local user) in a worker's hello at once, as many more queued;
  // all unauthenticated connections, in hello or queued.
  int hello_timeout_s = 5;
  int max_unauthenticated_per_client = 16;
  int max_unauthenticated = 64;
};

// Parses argv; throws std::invalid_argument with a message for the user.
// Returns false when --help was asked for (usage already printed).
bool parse_server_args(int argc, char** argv, ServerConfig* config);

}  // namespace rgpu::server
