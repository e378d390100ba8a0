// The addresses of a connected stream socket.
#pragma once
#include <string>

namespace rgpu::transport {

// "host:port" of the peer, "local" for a Unix socket, "?" when unknown.
std::string socket_peer(int fd);

// The IP address (text) this TCP socket is bound to; throws TransportError.
std::string socket_local_ip(int fd);

}  // namespace rgpu::transport
