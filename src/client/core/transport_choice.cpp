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

}  // namespace

transport::Transport& transport_named(const std::string& name) {
  static const auto tcp = transport::make_tcp_transport();
  static const auto shm = transport::make_shm_transport();
  if (name == "tcp") return *tcp;
  if (name == "shm") return *shm;
  // Made at first use: a process that never asks for TLS reads no certificates.
  static const auto tls = make_tls_from_environment();
  return *tls;
}

std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, int timeout_ms,
                                                  std::string* transport_name) {
  std::string want = environment("RGPU_TRANSPORT");
  if (!want.empty() && want != "tcp" && want != "shm" && want != "tls")
    throw transport::TransportError("RGPU_TRANSPORT must be tcp, shm or tls, not '" + want + "'");
  if (want == "tls") {
    *transport_name = "tls";
    return transport_named("tls").connect(server, timeout_ms);
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
