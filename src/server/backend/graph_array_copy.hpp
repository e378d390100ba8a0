// A graph copy node with a CUDA array on either side, as ArrayApi's 3-D copy
// takes it: both backends run such a node through their array copy.
#pragma once
#include "protocol/graph_node.hpp"
#include "server/backend/array_api.hpp"

namespace rgpu::server {

struct ArrayCopy {
  CopySide dst, src;
  cudaExtent extent;  // width in the array's elements
};

// `element`: bytes per element of the node's array (both arrays' size).
inline ArrayCopy array_copy_of(const proto::GraphNodeParams& p, size_t element) {
  auto side = [&](uint64_t array, const proto::ArrayPos& at, uint64_t ptr, uint64_t pitch, uint64_t slice) {
    if (array) return CopySide{array, nullptr, 0, 0, {at.x / element, at.y, at.z}};
    // Memory from the copy's first byte on; a single slice is `height` rows.
    return CopySide{0, reinterpret_cast<void*>(ptr), pitch, p.depth > 1 ? slice : p.height, {}};
  };
  return {side(p.dst_array, p.dst_at, p.dst, p.dst_pitch, p.dst_slice),
          side(p.src_array, p.src_at, p.src, p.src_pitch, p.src_slice), {p.width / element, p.height, p.depth}};
}

}  // namespace rgpu::server
