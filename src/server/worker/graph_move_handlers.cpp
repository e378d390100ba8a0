// A moved session's graphs (docs/migration.md). The source worker writes each
// graph the application holds, and each executable graph's copy
// (exec_graph_copies.hpp), as a GraphImage (kOpMoveGraphs); the target builds
// them again (kOpGraphBuild), every node checked as the graph calls check it.
#include <algorithm>
#include <cstring>
#include <set>
#include <span>
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
        if (!(p.host_sides & proto::kHostDst) && !s_.owns(p.dst, 1))
          return refuse("a graph copying memory not the session's");
        if (!(p.host_sides & proto::kHostSrc) && !s_.owns(p.src, 1))
          return refuse("a graph copying memory not the session's");
        return true;
      case cudaGraphNodeTypeMemset:
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeWaitEvent:
        return true;
      case cudaGraphNodeTypeGraph: {
        uint64_t child = 0;
        if (graphs(s_).child_graph(n, &child)) return refuse("a child graph the worker could not read");
        p.handle = 0;
        p.value = 0;
        node->child.push_back(write(child, {}, {}, depth + 1));
        return true;
      }
      case cudaGraphNodeTypeHost:  // by the client's number of its callback
        if (p.host_sides) return refuse("a graph copying pageable host memory (staged by rgpu over tcp)");
        p.handle = HostNodeRecords::id(p.handle);
        return true;
      case cudaGraphNodeTypeMemAlloc:
      case cudaGraphNodeTypeMemFree:
        return refuse("a graph with memory nodes (cudaMallocAsync in a graph)");
      case cudaGraphNodeTypeConditional:
        return refuse("a graph with conditional nodes");
      case cudaGraphNodeTypeExtSemaphoreSignal:
      case cudaGraphNodeTypeExtSemaphoreWait:
        return refuse("a graph with external semaphore nodes");
      default:
        return refuse("a graph with nodes of type " + std::to_string(p.type));
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
    if (copy.stale) reasons.insert("an executable graph updated in a node its copy does not follow");
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
void kernels_of(const GraphImage& image, std::set<uint64_t>* out) {
  for (const auto& node : image.nodes) {
    if (node.params.type == cudaGraphNodeTypeKernel) out->insert(node.params.function);
    for (const auto& child : node.child) kernels_of(child, out);
  }
}

// What the application set of a kernel's attributes, which its graph's nodes
// rely on (a launch past 48 KB of shared memory needs the larger limit set).
std::vector<std::pair<int32_t, int32_t>> set_attributes(SessionContext& s, uint64_t fn) {
  cudaFuncAttributes a{};
  if (s.backend().func_get_attributes(&a, fn) != cudaSuccess) return {};
  std::vector<std::pair<int32_t, int32_t>> out;
  if (a.maxDynamicSharedSizeBytes > 0)
    out.emplace_back(cudaFuncAttributeMaxDynamicSharedMemorySize, a.maxDynamicSharedSizeBytes);
  if (a.preferredShmemCarveout >= 0)
    out.emplace_back(cudaFuncAttributePreferredSharedMemoryCarveout, a.preferredShmemCarveout);
  if (a.nonPortableClusterSizeAllowed) out.emplace_back(cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (a.clusterSchedulingPolicyPreference)
    out.emplace_back(cudaFuncAttributeClusterSchedulingPolicyPreference, a.clusterSchedulingPolicyPreference);
  return out;
}

// Then: count, then each kernel the graphs launch, with count and each
// attribute the application may have set (cudaFuncAttribute, value).
int32_t move_graphs(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  std::set<std::string> reasons;
  const auto written = write_graphs(s, reasons);
  out.put<uint32_t>(static_cast<uint32_t>(reasons.size()));
  for (const auto& r : reasons) out.put_string("the session holds " + r);
  out.put<uint32_t>(static_cast<uint32_t>(written.size()));
  std::set<uint64_t> kernels;
  for (const auto& w : written) {
    out.put(w.handle).put<uint8_t>(w.exec).put(w.flags).put(w.source);
    proto::put_graph_image(out, w.image);
    kernels_of(w.image, &kernels);
  }
  out.put<uint32_t>(static_cast<uint32_t>(kernels.size()));
  for (uint64_t fn : kernels) {
    const auto attributes = set_attributes(s, fn);
    out.put(fn).put<uint32_t>(static_cast<uint32_t>(attributes.size()));
    for (const auto& [id, value] : attributes) out.put(id).put(value);
  }
  return cudaSuccess;
}

// Where a build failed: the node (by index at the top level), its type and
// the step.
struct BuildFailure {
  uint32_t node = 0;
  int32_t type = 0;
  std::string step;
};

int32_t build(SessionContext& s, const GraphImage& image, uint64_t* graph, std::vector<uint64_t>* nodes,
              BuildFailure* failed);

// A node added to `graph` after `deps`, checked as the graph calls check it,
// with the launch attributes it had; *step says what failed.
int32_t add_checked(SessionContext& s, uint64_t graph, const GraphNodeParams& p,
                    std::span<const proto::KernelNodeAttribute> attributes, std::span<const uint64_t> deps, uint64_t* n,
                    std::string* step) {
  *step = "its parameters";
  if (int32_t e = check_node(s, p)) {
    if (const FunctionInfo* f = p.type == cudaGraphNodeTypeKernel ? s.functions.find(p.function) : nullptr)
      *step += " (" + std::to_string(p.args.size()) + " bytes of arguments, the kernel takes " +
               std::to_string(f->args_size) + ")";
    return e;
  }
  *step = "adding it";
  if (!s.graphs.room_for_node()) return cudaErrorMemoryAllocation;
  if (int32_t e = graphs(s).add_node(n, graph, deps, to_backend(s, p))) return e;
  s.graphs.add_node(*n, graph);
  // The attributes the node had that a new node lacks (the source writes
  // those that are not zero; some are not zero on every node).
  for (const auto& a : attributes) {
    *step = "launch attribute " + std::to_string(a.id);
    cudaLaunchAttributeValue now{};
    if (int32_t e = check_kernel_node_attribute(s, a.id, a.value)) return e;
    if (graphs(s).kernel_node_get_attribute(*n, a.id, &now) == cudaSuccess &&
        std::memcmp(&now, &a.value, sizeof now) == 0)
      continue;
    if (int32_t e = graphs(s).kernel_node_set_attribute(*n, a.id, a.value)) return e;
  }
  return cudaSuccess;
}

// One node of an image added to `graph` after `deps`; *step says what failed.
int32_t add_from_image(SessionContext& s, uint64_t graph, const GraphImageNode& node, std::span<const uint64_t> deps,
                       uint64_t* n, std::string* step) {
  GraphNodeParams p = node.params;
  switch (p.type) {
    case cudaGraphNodeTypeKernel:
    case cudaGraphNodeTypeMemcpy:
    case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeHost:
      break;
    case cudaGraphNodeTypeGraph: {  // the node takes a copy of the child graph
      uint64_t child = 0;
      std::vector<uint64_t> child_nodes;
      BuildFailure inner;
      if (int32_t e = build(s, node.child.front(), &child, &child_nodes, &inner)) {
        *step = "its child graph's node " + std::to_string(inner.node) + ": " + inner.step;
        return e;
      }
      p.handle = child;
      p.value = cudaGraphChildGraphOwnershipClone;
      int32_t e = add_checked(s, graph, p, {}, deps, n, step);
      s.graphs.remove_graph(child);
      graphs(s).graph_destroy(child);
      return e;
    }
    default:
      *step = "its type";
      return cudaErrorNotSupported;  // what a source never writes
  }
  if (p.type != cudaGraphNodeTypeKernel && !node.attributes.empty()) {
    *step = "its launch attributes";
    return cudaErrorInvalidValue;
  }
  return add_checked(s, graph, p, node.attributes, deps, n, step);
}

// A graph built from its image, the application's own (in the session's
// table) while it is built; its nodes in the image's order.
int32_t build(SessionContext& s, const GraphImage& image, uint64_t* graph, std::vector<uint64_t>* nodes,
              BuildFailure* failed) {
  if (!s.graphs.room_for_graph()) return cudaErrorMemoryAllocation;
  if (int32_t e = graphs(s).graph_create(graph)) return e;
  s.graphs.add_graph(*graph, 0);
  for (const GraphImageNode& node : image.nodes) {
    std::vector<uint64_t> deps;
    for (uint32_t d : node.deps) deps.push_back((*nodes)[d]);
    uint64_t n = 0;
    std::string step;
    if (int32_t e = add_from_image(s, *graph, node, deps, &n, &step)) {
      s.graphs.remove_graph(*graph);
      graphs(s).graph_destroy(*graph);
      *failed = {static_cast<uint32_t>(nodes->size()), node.params.type, std::move(step)};
      return e;
    }
    nodes->push_back(n);
  }
  return cudaSuccess;
}

// Args: whether it is an executable graph, its instantiation flags, the
// graph it came from (this worker's, rebuilt before; 0: none), the image
// (an executable graph's: its nodes' originals this worker's nodes of that
// graph). Reply: the outcome (a CUDA error), the node it failed at, that
// node's type and the step that failed; then the graph or executable graph, count and each node.
int32_t build_graph(SessionContext& s, Request& req, proto::Writer& out, BuildFailure* failed) {
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
  if (int32_t e = build(s, image, &graph, &nodes, failed)) return e;
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
      *failed = {static_cast<uint32_t>(nodes.size()), -1, "instantiating it"};
      return e;
    }
    s.graphs.add_exec(x, source);
    s.exec_copies.adopt(x, std::move(copy));
    graph = x;
  }
  out.put<int32_t>(cudaSuccess).put<uint32_t>(0).put<int32_t>(0).put_string("");
  out.put(graph).put<uint32_t>(static_cast<uint32_t>(nodes.size()));
  for (uint64_t n : nodes) out.put(n);
  return cudaSuccess;
}

int32_t graph_build(SessionContext& s, Request& req, proto::Writer& out) {
  BuildFailure failed;
  proto::Writer built;
  const int32_t e = build_graph(s, req, built, &failed);
  if (e == cudaSuccess) {
    out.put_raw(built.bytes().data(), built.bytes().size());
  } else {
    out.put<int32_t>(e).put(failed.node).put(failed.type).put_string(failed.step);
  }
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
