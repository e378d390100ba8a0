// A moved session's graphs (docs/migration.md). The source worker writes each
// graph the application holds, and each executable graph's copy
// (exec_graph_copies.hpp), as a GraphImage (kOpMoveGraphs); the target builds
// them again (kOpGraphBuild), every node checked as the graph calls check it.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/graph_image.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/graph_move.hpp"
#include "server/worker/graph_nodes.hpp"
#include "server/worker/request.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

using proto::GraphImage;
using proto::GraphImageNode;

GraphBackend& graphs(SessionContext& s) { return s.backend().graphs(); }

constexpr int32_t kKernelNodeAttributes[] = {
    cudaLaunchAttributeAccessPolicyWindow,       cudaLaunchAttributeCooperative,
    cudaLaunchAttributeClusterDimension,         cudaLaunchAttributeClusterSchedulingPolicyPreference,
    cudaLaunchAttributePriority,                 cudaLaunchAttributeMemSyncDomainMap,
    cudaLaunchAttributeMemSyncDomain,            cudaLaunchAttributePreferredClusterDimension,
    cudaLaunchAttributePreferredSharedMemoryCarveout,
};

// Writes graphs as images; what cannot move goes to `reasons`.
class ImageWriter {
 public:
  ImageWriter(SessionContext& s, std::set<std::string>& reasons) : s_(s), reasons_(reasons) {}

  // `originals`: the graph's node -> the node the application names for it;
  // `enabled`: nodes the executable graph set (not) to run.
  GraphImage write(uint64_t graph, const std::unordered_map<uint64_t, uint64_t>& originals = {},
                   const std::unordered_map<uint64_t, uint32_t>& enabled = {}, uint32_t depth = 0) {
    GraphImage image;
    if (depth > proto::kMaxGraphImageDepth) {
      reasons_.insert("child graphs nested deeper than " + std::to_string(proto::kMaxGraphImageDepth));
      return image;
    }
    std::vector<uint64_t> nodes, from, to;
    if (graphs(s_).nodes(graph, &nodes) || graphs(s_).edges(graph, &from, &to)) {
      reasons_.insert("a graph the worker could not read");
      return image;
    }
    // Each node after its dependencies (Kahn's order).
    std::unordered_map<uint64_t, std::vector<uint64_t>> dependents, deps;
    std::unordered_map<uint64_t, size_t> waiting;
    for (size_t i = 0; i < from.size(); ++i) {
      dependents[from[i]].push_back(to[i]);
      deps[to[i]].push_back(from[i]);
      ++waiting[to[i]];
    }
    std::vector<uint64_t> order;
    for (uint64_t n : nodes)
      if (!waiting[n]) order.push_back(n);
    for (size_t i = 0; i < order.size(); ++i)
      for (uint64_t d : dependents[order[i]])
        if (--waiting[d] == 0) order.push_back(d);
    if (order.size() != nodes.size()) {
      reasons_.insert("a graph with a cycle");
      return image;
    }
    std::unordered_map<uint64_t, uint32_t> index;
    for (uint64_t n : order) {
      GraphImageNode node;
      node.handle = n;
      if (auto it = originals.find(n); it != originals.end()) node.original = it->second;
      if (auto it = enabled.find(n); it != enabled.end()) node.enabled = it->second;
      for (uint64_t d : deps[n]) node.deps.push_back(index.at(d));
      std::sort(node.deps.begin(), node.deps.end());
      if (!describe(n, &node, depth)) return {};
      index[n] = static_cast<uint32_t>(image.nodes.size());
      image.nodes.push_back(std::move(node));
    }
    return image;
  }

 private:
  bool refuse(const std::string& why) {
    reasons_.insert(why);
    return false;
  }

  bool describe(uint64_t n, GraphImageNode* node, uint32_t depth) {
    GraphNodeParams& p = node->params;
    if (graphs(s_).node_params(n, &p)) return refuse("a graph node the worker could not read");
    switch (p.type) {
      case cudaGraphNodeTypeKernel:
        for (int32_t id : kKernelNodeAttributes) {
          cudaLaunchAttributeValue value{}, none{};
          if (graphs(s_).kernel_node_get_attribute(n, id, &value) == cudaSuccess &&
              std::memcmp(&value, &none, sizeof value) != 0)
            node->attributes.push_back({id, value});
        }
        return true;
      case cudaGraphNodeTypeMemcpy:
        from_backend_copy(s_, &p);
        if (proto::copies_array(p)) return refuse("a graph copying to or from a CUDA array");
        if (p.host_sides & (proto::kStagingDst | proto::kStagingSrc))
          return refuse("a graph copying pageable host memory (staged by rgpu over tcp)");
        if (!(p.host_sides & proto::kHostDst) && !s_.owns(p.dst, 1)) return refuse("a graph copying memory not the session's");
        if (!(p.host_sides & proto::kHostSrc) && !s_.owns(p.src, 1)) return refuse("a graph copying memory not the session's");
        return true;
      case cudaGraphNodeTypeMemset:
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeWaitEvent: return true;
      case cudaGraphNodeTypeGraph: {
        uint64_t child = 0;
        if (graphs(s_).child_graph(n, &child)) return refuse("a child graph the worker could not read");
        p.handle = 0;
        p.value = 0;
        node->child.push_back(write(child, {}, {}, depth + 1));
        return true;
      }
      case cudaGraphNodeTypeHost: return refuse("a graph with host nodes (cudaLaunchHostFunc, cudaGraphAddHostNode)");
      case cudaGraphNodeTypeMemAlloc:
      case cudaGraphNodeTypeMemFree: return refuse("a graph with memory nodes (cudaMallocAsync in a graph)");
      case cudaGraphNodeTypeConditional: return refuse("a graph with conditional nodes");
      case cudaGraphNodeTypeExtSemaphoreSignal:
      case cudaGraphNodeTypeExtSemaphoreWait: return refuse("a graph with external semaphore nodes");
      default: return refuse("a graph with nodes of type " + std::to_string(p.type));
    }
  }

  SessionContext& s_;
  std::set<std::string>& reasons_;
};

struct Written {
  uint64_t handle;
  bool exec;
  uint64_t flags, source;
  GraphImage image;
};

// The session's graphs and executable graphs as images, or why they cannot move.
std::vector<Written> write_graphs(SessionContext& s, std::set<std::string>& reasons) {
  if (s.graphs.capturing()) reasons.insert("a stream capture in progress");
  if (s.graphs.user_objects()) reasons.insert("graph user objects (cudaUserObjectCreate)");
  std::vector<Written> written;
  ImageWriter writer(s, reasons);
  for (uint64_t g : s.graphs.own_graphs()) written.push_back({g, false, 0, 0, writer.write(g)});
  for (const auto& [exec, source] : s.graphs.execs()) {
    ExecGraphCopies::Copy copy;
    if (!s.exec_copies.find(exec, &copy)) {
      reasons.insert("an executable graph whose graph the worker could not copy");
      continue;
    }
    if (copy.stale) reasons.insert("an executable graph updated in a node of its child graphs");
    std::unordered_map<uint64_t, uint64_t> originals;  // the copy's node -> the application's
    for (const auto& [named, copied] : copy.nodes) originals[copied] = named;
    written.push_back({exec, true, copy.flags, source, writer.write(copy.graph, originals, copy.enabled)});
  }
  if (!reasons.empty()) written.clear();
  return written;
}

// Reply: count, then each reason it cannot move; count, then each graph:
// its handle, whether it is an executable graph, the executable graph's
// instantiation flags and the graph it came from (0: gone), its image.
int32_t move_graphs(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  std::set<std::string> reasons;
  const auto written = write_graphs(s, reasons);
  out.put<uint32_t>(static_cast<uint32_t>(reasons.size()));
  for (const auto& r : reasons) out.put_string("the session holds " + r);
  out.put<uint32_t>(static_cast<uint32_t>(written.size()));
  for (const auto& w : written) {
    out.put(w.handle).put<uint8_t>(w.exec).put(w.flags).put(w.source);
    proto::put_graph_image(out, w.image);
  }
  return cudaSuccess;
}

// A graph built from its image, the application's own (in the session's
// table) while it is built; its nodes in the image's order.
int32_t build(SessionContext& s, const GraphImage& image, uint64_t* graph, std::vector<uint64_t>* nodes) {
  if (!s.graphs.room_for_graph()) return cudaErrorMemoryAllocation;
  if (int32_t e = graphs(s).graph_create(graph)) return e;
  s.graphs.add_graph(*graph, 0);
  auto destroy = [&](uint64_t g) {
    s.graphs.remove_graph(g);
    graphs(s).graph_destroy(g);
  };
  for (const GraphImageNode& node : image.nodes) {
    GraphNodeParams p = node.params;
    std::vector<uint64_t> deps;
    for (uint32_t d : node.deps) deps.push_back((*nodes)[d]);
    uint64_t child = 0;
    std::vector<uint64_t> child_nodes;
    int32_t e = cudaSuccess;
    switch (p.type) {
      case cudaGraphNodeTypeKernel:
      case cudaGraphNodeTypeMemcpy:
      case cudaGraphNodeTypeMemset:
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeWaitEvent: break;
      case cudaGraphNodeTypeGraph:  // the node takes a copy of the child graph
        e = build(s, node.child.front(), &child, &child_nodes);
        p.handle = child;
        p.value = cudaGraphChildGraphOwnershipClone;
        break;
      default: e = cudaErrorNotSupported;  // what a source never writes
    }
    if (p.type != cudaGraphNodeTypeKernel && !node.attributes.empty()) e = cudaErrorInvalidValue;
    if (!e) e = check_node(s, p);
    for (const auto& a : node.attributes)
      if (!e) e = check_kernel_node_attribute(s, a.id, a.value);
    if (!e && !s.graphs.room_for_node()) e = cudaErrorMemoryAllocation;
    uint64_t n = 0;
    if (!e) e = graphs(s).add_node(&n, *graph, deps, to_backend(s, p));
    if (!e) s.graphs.add_node(n, *graph);
    for (const auto& a : node.attributes)
      if (!e) e = graphs(s).kernel_node_set_attribute(n, a.id, a.value);
    if (child) destroy(child);
    if (e) {
      destroy(*graph);
      return e;
    }
    nodes->push_back(n);
  }
  return cudaSuccess;
}

// Args: whether it is an executable graph, its instantiation flags, the
// graph it came from (this worker's, rebuilt before; 0: none), the image
// (an executable graph's: its nodes' originals this worker's nodes of that
// graph). Reply: the graph or executable graph, then count and each node.
int32_t graph_build(SessionContext& s, Request& req, proto::Writer& out) {
  const bool exec = req.args.get<uint8_t>();
  const auto flags = req.args.get<uint64_t>();
  const auto source = req.args.get<uint64_t>();
  const GraphImage image = proto::get_graph_image(req.args);
  req.args.expect_end();
  if (exec ? (source && !s.graphs.own_graph(source)) : source != 0) return cudaErrorInvalidValue;
  for (const auto& node : image.nodes)
    if (node.original && (!exec || !s.graphs.node_in(node.original, source))) return cudaErrorInvalidValue;
  if (exec && !s.graphs.room_for_exec()) return cudaErrorMemoryAllocation;
  uint64_t graph = 0;
  std::vector<uint64_t> nodes;
  if (int32_t e = build(s, image, &graph, &nodes)) return e;
  if (exec) {
    // The graph is the executable graph's copy, which the application never names.
    s.graphs.remove_graph(graph);
    ExecGraphCopies::Copy copy{graph, flags, {}, {}, true};
    uint64_t x = 0;
    int32_t e = graphs(s).instantiate(&x, graph, flags);
    for (size_t i = 0; i < nodes.size() && !e; ++i) {
      if (image.nodes[i].original) copy.nodes[image.nodes[i].original] = nodes[i];
      if (!image.nodes[i].enabled) {
        e = graphs(s).set_enabled(x, nodes[i], 0);
        copy.enabled[nodes[i]] = 0;
      }
    }
    if (e) {
      if (x) graphs(s).exec_destroy(x);
      graphs(s).graph_destroy(graph);
      return e;
    }
    s.graphs.add_exec(x, source);
    s.exec_copies.adopt(x, std::move(copy));
    graph = x;
  }
  out.put(graph).put<uint32_t>(static_cast<uint32_t>(nodes.size()));
  for (uint64_t n : nodes) out.put(n);
  return cudaSuccess;
}

}  // namespace

std::vector<std::string> graph_move_reasons(SessionContext& s) {
  std::set<std::string> reasons;
  write_graphs(s, reasons);
  return {reasons.begin(), reasons.end()};
}

void register_graph_move_handlers(Dispatcher& d) {
  d.add(proto::kOpMoveGraphs, move_graphs);
  d.add(proto::kOpGraphBuild, graph_build);
}

}  // namespace rgpu::server
