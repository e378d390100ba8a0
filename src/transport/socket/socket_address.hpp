// The addresses of a connected stream socket, and waiting for it to have
// something to read.
#pragma once
#include <string>

namespace rgpu::transport {

// "host:port" of the peer, "local" for a Unix socket, "?" when unknown.
std::string socket_peer(int fd);
// The host part of such a peer: "host" of "host:port", the text itself
// when it has no port ("local").
std::string peer_host(const std::string& peer);

// The IP address (text) this TCP socket is bound to; throws TransportError.
std::string socket_local_ip(int fd);

// Waits up to timeout_ms for data (or the peer's close) to read.
bool socket_readable(int fd, int timeout_ms);

}  // namespace rgpu::transport
