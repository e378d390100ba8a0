// Payloads whose size the request's header claims are read in blocks, so
// that memory grows with what arrives, not with what a header says.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "server/worker/request.hpp"

namespace rgpu::server {

inline void append_payload(Request& req, uint64_t n, std::vector<uint8_t>* out) {
  constexpr uint64_t kBlock = 1u << 20;
  while (n) {
    const size_t at = out->size();
    const uint64_t step = std::min(n, kBlock);
    out->resize(at + step);
    req.read_payload(out->data() + at, step);
    n -= step;
  }
}

}  // namespace rgpu::server
