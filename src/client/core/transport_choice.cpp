#include "client/core/transport_choice.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "client/core/memory_map.hpp"
#include "common/log.hpp"

namespace rgpu::client {
namespace {

bool is_local_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The automatic choice takes shm when this is true.
bool shm_socket_present(const transport::Endpoint& server) {
  return is_local_host(server.host) && access(transport::default_shm_socket(server.port).c_str(), F_OK) == 0;
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
// The ucx transport once made, for page_locked_added/removed.
std::atomic<transport::Transport*> ucx_made{nullptr};

void register_page_locked(transport::Transport& t, uint64_t base, size_t size) {
  try {
    t.register_memory(reinterpret_cast<void*>(base), size);
  } catch (const transport::TransportError& e) {
    // Its copies then register it each time, as other memory.
    RGPU_LOG(warn, "page-locked memory at 0x%llx not kept registered: %s", static_cast<unsigned long long>(base),
             e.what());
  }
}

std::unique_ptr<transport::Transport> make_client_ucx() {
  // Read by UCX when it loads; a user's own settings stay.
  setenv("UCX_MODULES", "^cu*", 0);
  setenv("UCX_ERROR_SIGNALS", "", 0);
  setenv("UCX_MEM_EVENTS", "no", 0);
  auto ucx = transport::make_ucx_transport();
  // Published before the memory already held is listed: a range added
  // meanwhile is then seen by one side or the other (registering is
  // idempotent).
  ucx_made = ucx.get();
  for (const HostRange& r : MemoryMap::get().page_locked_ranges()) register_page_locked(*ucx, r.base, r.size);
  return ucx;
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

void page_locked_added(uint64_t base, size_t size) {
  if (transport::Transport* ucx = ucx_made) register_page_locked(*ucx, base, size);
}

void page_locked_removed(uint64_t base) {
  if (transport::Transport* ucx = ucx_made) ucx->unregister_memory(reinterpret_cast<void*>(base));
}

std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, const std::string& want,
                                                  int timeout_ms, std::string* transport_name) {
  if (want == "tls" || want == "ucx") {
    *transport_name = want;
    return transport_named(want).connect(server, timeout_ms);
  }
  bool try_shm = want == "shm" || (want.empty() && shm_socket_present(server));
  std::string path = transport::default_shm_socket(server.port);
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

std::string transport_reason(const transport::Endpoint& server, const std::string& want) {
  if (!want.empty()) return want + ": asked for (RGPU_TRANSPORT or the server's entry in RGPU_DEVICES)";
  const std::string socket = transport::default_shm_socket(server.port);
  if (shm_socket_present(server))
    return "shm: the server is on this host and its Unix socket " + socket +
           " exists (page-locked memory shared with the server, no network stack)";
  if (is_local_host(server.host))
    return "tcp: the server is on this host but has no Unix socket " + socket +
           " (started with --unix-socket none?): shm would be faster";
  return "tcp: the server is on another host (RGPU_TRANSPORT=ucx for InfiniBand/RoCE, tls for encryption)";
}

}  // namespace rgpu::client
