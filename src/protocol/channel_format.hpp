// The bytes one element of a CUDA array takes, from its channel format. Both
// sides need it: the client to turn byte offsets into elements, the server to
// check extents against what it allocated.
#pragma once
#include <driver_types.h>

#include <cstddef>

#include "protocol/wire_enum.hpp"

namespace rgpu::proto {

// 0 when rgpu does not handle the format: only plain signed, unsigned and
// float channels of 8, 16 or 32 bits, one to four of them (x first), whose
// element is 1, 2, 4, 8 or 16 bytes.
// The format may come off the wire unchecked (wire_enum.hpp).
inline size_t channel_element_size(const cudaChannelFormatDesc& d) {
  const auto kind = enum_number(d.f);
  if (kind != cudaChannelFormatKindSigned && kind != cudaChannelFormatKindUnsigned &&
      kind != cudaChannelFormatKindFloat)
    return 0;
  int bits[4] = {d.x, d.y, d.z, d.w};
  size_t total = 0;
  bool ended = false;
  for (int b : bits) {
    if (b == 0) {
      ended = true;
      continue;
    }
    if (ended || (b != 8 && b != 16 && b != 32) || b != d.x) return 0;
    if (d.f == cudaChannelFormatKindFloat && b == 8) return 0;
    total += b / 8;
  }
  return total == 3 || total == 6 || total == 12 ? 0 : total;
}

}  // namespace rgpu::proto
