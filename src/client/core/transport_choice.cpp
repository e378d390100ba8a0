#include "client/core/transport_choice.hpp"

#include <unistd.h>

#include <cstdlib>


namespace rgpu::client {
namespace {

bool is_local_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::unique_ptr<transport::Transport> client_ucx_transport() {
  // Read by UCX when it loads; a user's own settings stay.
  setenv("UCX_MODULES", "^cu*", 0);
  setenv("UCX_ERROR_SIGNALS", "", 0);
  setenv("UCX_MEM_EVENTS", "no", 0);
  return transport::make_ucx_transport();
}

std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, const std::string& want,
                                                  int timeout_ms, std::string* transport_name) {
  if (want == "ucx") {
    *transport_name = "ucx";
    return client_ucx_transport()->connect(server, timeout_ms);
  }
  std::string path = transport::default_shm_socket(server.port);
  bool try_shm = want == "shm" || (want.empty() && is_local_host(server.host) && access(path.c_str(), F_OK) == 0);
  if (try_shm) {
    try {
      *transport_name = "shm";
      return transport::make_shm_transport()->connect(transport::Endpoint{path, 0}, timeout_ms);
    } catch (const transport::TransportError&) {
      if (want == "shm") throw;
    }
  }
  *transport_name = "tcp";
  return transport::make_tcp_transport()->connect(server, timeout_ms);
}

}  // namespace rgpu::client
