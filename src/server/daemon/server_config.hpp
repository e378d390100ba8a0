// rgpu-server settings: from a config file (key = value lines, the same keys
// as the flags), then from flags, which win.
#pragma once
#include <string>
#include <vector>

namespace rgpu::server {

struct ServerConfig {
  std::string listen = "0.0.0.0";
  int port = 18515;
  std::vector<int> gpus;  // empty: every GPU the backend sees
  int workers = 2;        // pre-forked, CUDA already initialised
  std::string backend = "cuda";
  std::string log_level = "info";
  std::string module_cache;
  std::string token;  // from token-file; empty: no authentication
  // Unix socket for clients on this host (shm transport); "none" disables.
  std::string unix_socket;
};

// Parses argv; throws std::invalid_argument with a message for the user.
// Returns false when --help was asked for (usage already printed).
bool parse_server_args(int argc, char** argv, ServerConfig* config);

}  // namespace rgpu::server
