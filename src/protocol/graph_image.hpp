// A graph as a moved session carries it to another worker (docs/migration.md):
// its nodes in an order where each comes after its dependencies, each with
// its parameters as they cross the wire, a kernel node's launch attributes
// and a child graph node's graph. The worker that held the graph writes it
// (kOpMoveGraphs), the client puts the target's kernels and events in, and
// the target builds it (kOpGraphBuild).
#pragma once
#include <cstdint>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/graph_node.hpp"

namespace rgpu::proto {

struct KernelNodeAttribute {
  int32_t id;  // cudaLaunchAttributeID
  cudaLaunchAttributeValue value;
};

struct GraphImage;

struct GraphImageNode {
  uint64_t handle = 0;  // the node on the worker that wrote the image
  // In an executable graph's image: the node of the graph it was made from
  // that this one stands for (the application names that one in updates), or 0.
  uint64_t original = 0;
  uint32_t enabled = 1;        // as set on the executable graph
  std::vector<uint32_t> deps;  // earlier nodes, by index
  GraphNodeParams params;      // a child graph node's handle is unused: see child
  std::vector<KernelNodeAttribute> attributes;
  std::vector<GraphImage> child;  // a child graph node's graph: exactly one
};

struct GraphImage {
  std::vector<GraphImageNode> nodes;
};

// Child graphs nest at most this deep, and an image holds at most this many
// nodes at each level: larger is a malformed message.
constexpr uint32_t kMaxGraphImageDepth = 16;
constexpr uint32_t kMaxGraphImageNodes = 1u << 20;

inline void put_graph_image(Writer& w, const GraphImage& g) {
  w.put<uint32_t>(static_cast<uint32_t>(g.nodes.size()));
  for (const auto& n : g.nodes) {
    w.put(n.handle).put(n.original).put(n.enabled);
    w.put<uint32_t>(static_cast<uint32_t>(n.deps.size()));
    for (uint32_t d : n.deps) w.put(d);
    put_node(w, n.params);
    w.put<uint32_t>(static_cast<uint32_t>(n.attributes.size()));
    for (const auto& a : n.attributes) w.put(a.id).put(a.value);
    w.put<uint8_t>(!n.child.empty());
    if (!n.child.empty()) put_graph_image(w, n.child.front());
  }
}

// Throws DecodeError on a malformed image: too deep or large, or a
// dependency that is not an earlier node.
inline GraphImage get_graph_image(Reader& r, uint32_t depth = 0) {
  if (depth > kMaxGraphImageDepth) throw DecodeError("child graphs nested too deep");
  GraphImage g;
  const auto count = r.get<uint32_t>();
  if (count > kMaxGraphImageNodes || count > r.remaining()) throw DecodeError("more graph nodes than allowed");
  g.nodes.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    auto& n = g.nodes[i];
    n.handle = r.get<uint64_t>();
    n.original = r.get<uint64_t>();
    n.enabled = r.get<uint32_t>();
    const auto deps = r.get<uint32_t>();
    if (deps > i) throw DecodeError("more dependencies than earlier nodes");
    n.deps.resize(deps);
    for (auto& d : n.deps)
      if ((d = r.get<uint32_t>()) >= i) throw DecodeError("a dependency on a later node");
    n.params = get_node(r);
    const auto attributes = r.get<uint32_t>();
    if (attributes > r.remaining() / (sizeof(int32_t) + sizeof(cudaLaunchAttributeValue)))
      throw DecodeError("more attributes than the message holds");
    n.attributes.resize(attributes);
    for (auto& a : n.attributes) a = {r.get<int32_t>(), r.get<cudaLaunchAttributeValue>()};
    if (r.get<uint8_t>()) n.child.push_back(get_graph_image(r, depth + 1));
    if (n.child.empty() != (n.params.type != cudaGraphNodeTypeGraph))
      throw DecodeError("a child graph node without its graph");
  }
  return g;
}

}  // namespace rgpu::proto
