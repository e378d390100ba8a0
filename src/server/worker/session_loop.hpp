// A worker serving one client: handshake, then requests until the client
// leaves. Runs in the worker process that owns the backend.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/pool/admission.hpp"
#include "server/pool/server_counters.hpp"
#include "server/pool/session_bounds.hpp"
#include "server/worker/ipc_records.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

class HelloDeadline;

// What the server offers and what one session may take (server_config.hpp
// says what each limit means; 0: none).
struct SessionLimits {
  std::vector<int> exported_gpus;  // what this server offers
  std::string module_cache_dir;
  std::string token;  // empty: no authentication
  PoolPolicy pool;
  ServerCounters* counters = nullptr;  // null outside a daemon
  int admission_channel = -1;  // to the daemon (admission.hpp); -1: none asked
  // An MPS client whose session may bring a compute share: CUDA (the
  // backend's init) starts only once the share is known, since MPS reads
  // it when the process first connects (compute_share.hpp).
  bool cuda_after_admission = false;
  int max_connections = 0;
  uint32_t max_frame_bytes = 0;
  uint64_t max_memory = 0;
  uint64_t max_host_memory = 0;
  SessionBounds bounds;
  int idle_timeout_s = 0;
  int peer_timeout_s = 0;
  IpcSharing ipc_sharing = IpcSharing::owner;
  int hello_timeout_s = 5;  // a join's whole hello; the first connection's is the caller's
};

// Returns when the session ends (client gone, or a frame so malformed that
// the stream cannot be trusted). Never throws. `hello`, armed by the caller
// when it took the connection, is disarmed once the hello is answered.
void serve_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits,
                   HelloDeadline* hello = nullptr);

}  // namespace rgpu::server
