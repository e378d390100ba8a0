// Unix socket addresses: a filesystem path, or "@name" for a name in the
// abstract namespace (no file to clean up; gone with its last descriptor).
#pragma once
#include <sys/socket.h>
#include <sys/un.h>

#include <string>

namespace rgpu::transport {

// Fills addr and returns its length; throws TransportError if too long.
socklen_t unix_address(const std::string& name, sockaddr_un* addr);
bool is_abstract(const std::string& name);

}  // namespace rgpu::transport
