// A worker serving one client: handshake, then requests until the client
// leaves. Runs in the worker process that owns the backend.
#pragma once
#include <string>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/pool/admission.hpp"
#include "server/pool/server_counters.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

struct SessionLimits {
  std::vector<int> exported_gpus;  // what this server offers
  std::string module_cache_dir;
  std::string token;  // empty: no authentication
  PoolPolicy pool;
  ServerCounters* counters = nullptr;  // null outside a daemon
};

// Returns when the session ends (client gone, or a frame so malformed that
// the stream cannot be trusted). Never throws.
void serve_session(Backend& backend, transport::Connection& conn, const SessionLimits& limits);

}  // namespace rgpu::server
