// Legacy texture and surface references (cuTexRef*, cuSurfRef*): which
// property a kOpReferenceSet/Get names, and its value on the wire.
#pragma once
#include <cstdint>

namespace rgpu::proto {

enum class RefAttr : uint32_t {
  address,             // handle: device address, bytes: size; set answers bytes: the offset
  address_2d,          // set only. handle: device address, bytes: pitch, width, height, a: format, b: channels
  address_mode,        // a: dimension, b: CUaddress_mode
  array,               // handle: array, a: flags
  mipmapped_array,     // handle: mipmapped array, a: flags
  border_color,        // f[0..3]
  filter_mode,         // a
  flags,               // a
  format,              // a: CUarray_format, b: channels
  max_anisotropy,      // a
  mipmap_filter_mode,  // a
  mipmap_level_bias,   // f[0]
  mipmap_level_clamp,  // f[0]: min, f[1]: max
  surface_array,       // surface references only. handle: array, a: flags
  function_parameter,  // set only (cuParamSetTexRef). handle: function, a: texture unit
};

struct RefValue {
  uint64_t handle = 0;
  uint64_t bytes = 0;
  uint64_t width = 0, height = 0;
  int32_t a = 0, b = 0;
  float f[4] = {};
};

}  // namespace rgpu::proto
