// Connecting a TCP socket, within a time limit.
#pragma once
#include "transport/transport.hpp"

namespace rgpu::transport {

// A connected, blocking socket with rgpu's TCP options (tune_tcp_socket);
// throws TransportError when no address of `where` answers in time.
int tcp_connect(const Endpoint& where, int timeout_ms);

}  // namespace rgpu::transport
