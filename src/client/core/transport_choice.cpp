#include "client/core/transport_choice.hpp"

#include <unistd.h>

#include <cstdlib>

namespace rgpu::client {
namespace {

bool is_local_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::unique_ptr<transport::Transport> make_tls_from_environment() {
  return transport::make_tls_client_transport(
      {environment("RGPU_TLS_CERT"), environment("RGPU_TLS_KEY"), environment("RGPU_TLS_CA")});
}

// The ucx transport as a client loads it: without UCX's CUDA modules, which
// would call the CUDA driver this process has (rgpu's own), without UCX's
// handlers of the application's crash signals, and without UCX's hooks on
// mmap/mremap (rgpu's managed memory remaps pages inside a fault handler).
std::unique_ptr<transport::Transport> make_client_ucx() {
  // Read by UCX when it loads; a user's own settings stay.
  setenv("UCX_MODULES", "^cu*", 0);
  setenv("UCX_ERROR_SIGNALS", "", 0);
  setenv("UCX_MEM_EVENTS", "no", 0);
  return transport::make_ucx_transport();
}

}  // namespace

transport::Transport& transport_named(const std::string& name) {
  static const auto tcp = transport::make_tcp_transport();
  static const auto shm = transport::make_shm_transport();
  if (name == "tcp") return *tcp;
  if (name == "shm") return *shm;
  if (name == "ucx") {
    // Made at first use: a process that never asks for ucx loads no UCX.
    static const auto ucx = make_client_ucx();
    return *ucx;
  }
  // Made at first use: a process that never asks for TLS reads no certificates.
  static const auto tls = make_tls_from_environment();
  return *tls;
}

std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, const std::string& want,
                                                  int timeout_ms, std::string* transport_name) {
  if (want == "tls" || want == "ucx") {
    *transport_name = want;
    return transport_named(want).connect(server, timeout_ms);
  }
  std::string path = transport::default_shm_socket(server.port);
  bool try_shm = want == "shm" || (want.empty() && is_local_host(server.host) && access(path.c_str(), F_OK) == 0);
  if (try_shm) {
    try {
      *transport_name = "shm";
      return transport_named("shm").connect(transport::Endpoint{path, 0}, timeout_ms);
    } catch (const transport::TransportError&) {
      if (want == "shm") throw;
    }
  }
  *transport_name = "tcp";
  return transport_named("tcp").connect(server, timeout_ms);
}

}  // namespace rgpu::client
