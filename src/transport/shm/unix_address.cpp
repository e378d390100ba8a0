#include "transport/shm/unix_address.hpp"

#include <cstddef>
#include <cstring>

#include "transport/transport.hpp"

namespace rgpu::transport {

bool is_abstract(const std::string& name) { return !name.empty() && name[0] == '@'; }

socklen_t unix_address(const std::string& name, sockaddr_un* addr) {
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  if (name.size() >= sizeof addr->sun_path) throw TransportError("socket path too long: " + name);
  std::memcpy(addr->sun_path, name.c_str(), name.size() + 1);
  if (!is_abstract(name)) return sizeof *addr;
  // An abstract name starts with a NUL byte and is exactly as long as given.
  addr->sun_path[0] = '\0';
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
}

}  // namespace rgpu::transport
