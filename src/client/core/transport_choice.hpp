// Which transport reaches a server: RGPU_TRANSPORT=tcp|shm forces one; by
// default shm when the server is on this host (its Unix socket exists),
// else tcp.
#pragma once
#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace rgpu::client {

// Connects; falls back from an automatic shm choice to tcp if the socket is
// stale. Throws TransportError.
std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, int timeout_ms,
                                                  std::string* transport_name);

}  // namespace rgpu::client
