// Which transport reaches a server: the one asked for (RGPU_TRANSPORT or a
// device entry's tcp://, shm://, tls:// or ucx://), by default shm when the
// server is on this host (its Unix socket exists), else tcp. tls takes its
// files from RGPU_TLS_CA (the CA that signed the server's certificate;
// default: the system's), RGPU_TLS_CERT and RGPU_TLS_KEY (a client
// certificate, for servers that ask for one).
#pragma once
#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace rgpu::client {

// Connects over `wanted` (empty: the default choice); falls back from an
// automatic shm choice to tcp if the socket is stale. Throws TransportError.
std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, const std::string& wanted,
                                                  int timeout_ms, std::string* transport_name);

// Why connect_to takes the transport it takes for `want`, in words (`rgpu doctor`).
std::string transport_reason(const transport::Endpoint& server, const std::string& want);

// The process's transport of that name ("tcp", "shm", "tls" or "ucx"), made once.
transport::Transport& transport_named(const std::string& name);

// Page-locked host memory the application holds (memory_map.hpp): the
// transports that register memory (ucx, once this process uses it) keep it
// registered until it goes, so its copies register nothing of their own.
void page_locked_added(uint64_t base, size_t size);
void page_locked_removed(uint64_t base);

}  // namespace rgpu::client
