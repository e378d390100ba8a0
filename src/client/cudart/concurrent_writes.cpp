#include "client/cudart/concurrent_writes.hpp"

namespace rgpu::client {

size_t merge_concurrent_writes(const uint8_t* fetched, const uint8_t* now, uint8_t* host, size_t n) {
  size_t both = 0;
  for (size_t b = 0; b < n; ++b) {
    if (host[b] == fetched[b])
      host[b] = now[b];
    else if (now[b] != fetched[b])
      ++both;
  }
  return both;
}

}  // namespace rgpu::client
