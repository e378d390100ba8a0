#include "server/pool/local_host.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>

namespace rgpu::server {
namespace {

bool same_address(const sockaddr* a, const sockaddr* b) {
  if (a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  return false;
}

bool is_loopback(const sockaddr* a) {
  if (a->sa_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  return a->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
}

}  // namespace

bool names_this_host(const std::string& host) {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) {
    std::string self = name;
    if (host == self || host == self.substr(0, self.find('.'))) return true;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  ifaddrs* ifs = nullptr;
  bool mine = false;
  if (getifaddrs(&ifs) == 0) {
    for (addrinfo* a = found; a && !mine; a = a->ai_next) {
      if (is_loopback(a->ai_addr)) mine = true;
      for (ifaddrs* i = ifs; i && !mine; i = i->ifa_next)
        if (i->ifa_addr && same_address(a->ai_addr, i->ifa_addr)) mine = true;
    }
    freeifaddrs(ifs);
  }
  freeaddrinfo(found);
  return mine;
}

}  // namespace rgpu::server
