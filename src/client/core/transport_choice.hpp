// Which transport reaches a server: the one asked for (tcp, shm or ucx), or
// by default shm when the server is on this host (its Unix socket exists),
// else tcp.
#pragma once
#include <memory>
#include <string>

#include "transport/transport.hpp"

namespace rgpu::client {

// Connects over `wanted` (empty: the default choice); falls back from an
// automatic shm choice to tcp if the socket is stale. Throws TransportError.
// The ucx transport as a client loads it: without UCX's CUDA modules, which
// would call the CUDA driver this process has (rgpu's own), without UCX's
// handlers of the application's crash signals, and without UCX's hooks on
// mmap/mremap (rgpu's managed memory remaps pages inside a fault handler).
std::unique_ptr<transport::Transport> client_ucx_transport();

std::unique_ptr<transport::Connection> connect_to(const transport::Endpoint& server, const std::string& wanted,
                                                  int timeout_ms, std::string* transport_name);

}  // namespace rgpu::client
