// How a 3-D copy names its sides and extent on the wire (kOpMemcpy3D*).
// Host data never appears here: it travels as packed rows in the payload.
#pragma once
#include <cstdint>

namespace rgpu::proto {

// A CUDA array (array != 0, by its server handle) or pitched device memory
// (ptr, pitch bytes per row, rows per slice). x is in bytes either way.
struct CopySideWire {
  uint64_t array;
  uint64_t ptr;
  uint64_t pitch;
  uint64_t rows;
  uint64_t x, y, z;
};

// Width in bytes; every row is width bytes on the wire.
struct CopyExtentWire {
  uint64_t width, height, depth;
};

}  // namespace rgpu::proto
