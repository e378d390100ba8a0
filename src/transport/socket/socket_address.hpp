// The addresses of a connected stream socket, and waiting for it to have
// something to read.
#pragma once
#include <string>

namespace rgpu::transport {

// "host:port" of the peer, "local" for a Unix socket, "?" when unknown.
std::string socket_peer(int fd);
// Who is at the other end, as the server's per-client bounds count it:
// "host ADDRESS" over tcp (its port aside), "user UID" over a Unix socket
// (SO_PEERCRED), "unknown" when neither can be told.
std::string peer_identity(int fd);

// The IP address (text) this TCP socket is bound to; throws TransportError.
std::string socket_local_ip(int fd);

// Waits up to timeout_ms for data (or the peer's close) to read.
bool socket_readable(int fd, int timeout_ms);

}  // namespace rgpu::transport
