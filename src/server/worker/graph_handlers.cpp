// Graphs and stream capture. Every graph, node, executable graph, stream,
// event, function and device range a request names is checked against the
// session's tables before the backend sees it; handles the backend hands out
// enter the tables as they reach the client.
#include <algorithm>
#include <iterator>

#include "protocol/ops.hpp"
#include "common/log.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/graph_nodes.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

using Handles = std::vector<uint64_t>;

GraphBackend& graphs(SessionContext& s) { return s.backend().graphs(); }

void put_handles(proto::Writer& out, const Handles& h) {
  out.put<uint32_t>(static_cast<uint32_t>(h.size()));
  for (uint64_t x : h) out.put(x);
}

Handles get_handles(proto::Reader& r) {
  auto n = r.get<uint32_t>();
  if (n > r.remaining() / sizeof(uint64_t)) throw proto::DecodeError("more handles than the message holds");
  Handles h(n);
  for (auto& x : h) x = r.get<uint64_t>();
  return h;
}

bool nodes_in(SessionContext& s, const Handles& nodes, uint64_t graph) {
  for (uint64_t n : nodes)
    if (!s.graphs.node_in(n, graph)) return false;
  return true;
}

constexpr size_t kMaxNodeMemOps = 4096;

// Rows of `width` bytes `pitch` apart: the bytes they span, false when they overlap or overflow.
bool rows_span(uint64_t pitch, uint64_t width, uint64_t height, uint64_t* span) {
  if (width == 0 || height == 0) {
    *span = 0;
    return true;
  }
  if (height > 1 && width > pitch) return false;
  return !__builtin_mul_overflow(pitch, height - 1, span) && !__builtin_add_overflow(*span, width, span);
}

constexpr uint64_t kMaxConditionalBodies = 1 << 16;

// The bytes one side of a copy node spans (0 for rows check_node refuses).
uint64_t side_span(uint64_t pitch, uint64_t slice, const GraphNodeParams& p) {
  uint64_t span = 0;
  return proto::copy_span(pitch, slice, p, &span) ? span : 0;
}

}  // namespace

bool kernel_node_attribute(int32_t attr) {
  return std::find(std::begin(kKernelNodeAttributes), std::end(kKernelNodeAttributes), attr) !=
         std::end(kKernelNodeAttributes);
}

int32_t check_kernel_node_attribute(SessionContext& s, int32_t attr, const cudaLaunchAttributeValue& value) {
  if (!kernel_node_attribute(attr)) return cudaErrorInvalidValue;
  if (attr == cudaLaunchAttributeAccessPolicyWindow) {
    // The window names device memory: it must be the session's own.
    const auto& w = value.accessPolicyWindow;
    if (w.num_bytes && !s.owns(reinterpret_cast<uint64_t>(w.base_ptr), w.num_bytes)) return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

// What a node may hold: this session's kernels, memory, events, graphs and conditional handles.
int32_t check_node(SessionContext& s, const GraphNodeParams& p) {
  switch (p.type) {
    case cudaGraphNodeTypeKernel: {
      const FunctionInfo* f = s.functions.find(p.function);
      if (!f) return cudaErrorInvalidDeviceFunction;
      return p.args.size() == f->args_size ? cudaSuccess : cudaErrorInvalidValue;
    }
    case cudaGraphNodeTypeMemcpy: {
      if (p.depth == 0) return cudaErrorInvalidValue;
      constexpr uint8_t kSides = proto::kHostDst | proto::kHostSrc | proto::kStagingDst | proto::kStagingSrc;
      if (p.host_sides & ~kSides) return cudaErrorInvalidValue;
      // An array side must be one of the session's arrays, the region inside
      // it; a host side client memory this worker maps (shm), a staging side
      // inside one of the session's staging slabs.
      size_t element = 0;
      auto side_ok = [&](uint64_t array, const proto::ArrayPos& at, uint64_t ptr, uint64_t pitch, uint64_t slice,
                         uint8_t host, uint8_t staging) -> int32_t {
        if (array) {
          ArrayRecord r;
          if (p.host_sides & (host | staging)) return cudaErrorInvalidValue;
          if (int32_t e = check_array_region(s.arrays, array, at.x, at.y, at.z, p.width, p.height, p.depth, &r))
            return e;
          // Between two arrays, elements of one size (as the copies outside graphs).
          if (element && element != r.element) return cudaErrorInvalidValue;
          element = r.element;
          return cudaSuccess;
        }
        uint64_t span;
        if (!proto::copy_span(pitch, slice, p, &span)) return cudaErrorInvalidPitchValue;
        if ((p.host_sides & host) && (p.host_sides & staging)) return cudaErrorInvalidValue;
        bool ok = p.host_sides & host      ? s.shared_host(ptr, span) != nullptr
                  : p.host_sides & staging ? s.graph_staging.contains(ptr, span)
                                           : s.owns(ptr, span);
        return ok ? cudaSuccess : cudaErrorInvalidValue;
      };
      if (int32_t e = side_ok(p.dst_array, p.dst_at, p.dst, p.dst_pitch, p.dst_slice, proto::kHostDst,
                              proto::kStagingDst))
        return e;
      return side_ok(p.src_array, p.src_at, p.src, p.src_pitch, p.src_slice, proto::kHostSrc, proto::kStagingSrc);
    }
    case cudaGraphNodeTypeMemset: {
      uint64_t bytes, span;
      if (p.element_size != 1 && p.element_size != 2 && p.element_size != 4) return cudaErrorInvalidValue;
      if (__builtin_mul_overflow(p.width, uint64_t{p.element_size}, &bytes)) return cudaErrorInvalidValue;
      if (!rows_span(p.dst_pitch, bytes, p.height, &span)) return cudaErrorInvalidPitchValue;
      return s.owns(p.dst, span) ? cudaSuccess : cudaErrorInvalidValue;
    }
    case cudaGraphNodeTypeGraph: return s.graphs.graph(p.handle) ? cudaSuccess : cudaErrorInvalidValue;
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent: return s.valid_event(p.handle) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case cudaGraphNodeTypeEmpty: return cudaSuccess;
    case cudaGraphNodeTypeHost: {
      // A staged copy's host node names the block it fills (kStagingDst) or sends (kStagingSrc).
      bool staging_ok = p.host_sides == 0 ||
                        ((p.host_sides == proto::kStagingDst || p.host_sides == proto::kStagingSrc) &&
                         s.graph_staging.contains(p.dst, p.width));
      return s.host_nodes.valid(p.handle) && staging_ok ? cudaSuccess : cudaErrorInvalidValue;
    }
    case cudaGraphNodeTypeMemAlloc:
      return p.width && s.has_gpu(static_cast<int>(p.value)) ? cudaSuccess : cudaErrorInvalidValue;
    case cudaGraphNodeTypeMemFree:  // a graph's allocation its graph frees is freed only there, once
      return (s.allocations.contains(p.dst, 1) || s.graphs.graph_allocation(p.dst)) &&
                     !s.graphs.freed_by_its_graph(p.dst)
                 ? cudaSuccess
                 : cudaErrorInvalidValue;
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
      for (const auto& op : p.semaphores) {
        if (!s.external_semaphores.contains(op.semaphore)) return cudaErrorInvalidResourceHandle;
        if (op.flags != 0) return cudaErrorInvalidValue;  // NvSciSync only
      }
      return cudaSuccess;
    case cudaGraphNodeTypeConditional:
      // The bodies are the backend's to make; a switch's count is bounded
      // only so that a request cannot ask for an unbounded number of graphs.
      if (!p.bodies.empty() || p.width == 0 || p.width > kMaxConditionalBodies) return cudaErrorInvalidValue;
      if (p.value != cudaGraphCondTypeIf && p.value != cudaGraphCondTypeWhile && p.value != cudaGraphCondTypeSwitch)
        return cudaErrorInvalidValue;
      return s.graphs.conditional(p.handle) ? cudaSuccess : cudaErrorInvalidValue;
    case proto::kGraphNodeTypeBatchMemOp: {
      // Stream memory operations, each on the session's own memory, aligned.
      auto ops = proto::node_mem_ops(p);
      if (ops.empty() || ops.size() > kMaxNodeMemOps || p.args.size() != ops.size() * sizeof(proto::MemOpWire))
        return cudaErrorInvalidValue;
      for (const auto& op : ops) {
        int width = proto::mem_op_width(op.type);
        if (width < 0 || (width == 0 ? op.address != 0 : (op.address % width || !s.owns(op.address, width))))
          return cudaErrorInvalidValue;
      }
      return cudaSuccess;
    }
    default: return cudaErrorNotSupported;
  }
}

// Host nodes travel as the client's callback number; the backend holds the
// worker's record of it.
GraphNodeParams to_backend(SessionContext& s, GraphNodeParams p) {
  if (p.type == cudaGraphNodeTypeMemAlloc) p.dst = 0;  // the backend's answer, not the client's
  if (p.type == cudaGraphNodeTypeMemcpy) {
    // Shared host memory by this worker's mapping (check_node found both).
    auto local = [&](uint64_t client, uint64_t pitch, uint64_t slice) {
      return reinterpret_cast<uint64_t>(s.shared_host(client, side_span(pitch, slice, p)));
    };
    if (p.host_sides & proto::kHostDst) p.dst = local(p.dst, p.dst_pitch, p.dst_slice);
    if (p.host_sides & proto::kHostSrc) p.src = local(p.src, p.src_pitch, p.src_slice);
    // Staging blocks are this worker's page-locked memory, by its own address.
    if (p.host_sides & proto::kStagingDst) p.host_sides = (p.host_sides & ~proto::kStagingDst) | proto::kHostDst;
    if (p.host_sides & proto::kStagingSrc) p.host_sides = (p.host_sides & ~proto::kStagingSrc) | proto::kHostSrc;
  }
  if (p.type == cudaGraphNodeTypeHost) {
    graphs(s).set_host_node_runner(HostNodeRecords::run);
    CallbackStaging staging;
    if (p.host_sides) staging = {reinterpret_cast<char*>(p.dst), p.width, p.host_sides == proto::kStagingDst};
    GraphNodeParams host;
    host.type = cudaGraphNodeTypeHost;
    host.handle = s.host_nodes.record(p.handle, staging);
    return host;
  }
  return p;
}

// A copy node's memory sides as the client names them: the worker's mappings of
// shared host memory become the application's addresses again (a captured
// copy's too, which the backend holds without saying which side is host),
// and staging blocks are marked as such.
void from_backend_copy(SessionContext& s, GraphNodeParams* p) {
  p->host_sides = 0;
  auto side = [&](uint64_t* ptr, uint64_t span, uint8_t host, uint8_t staging) {
    if (s.owns(*ptr, span)) return;
    if (auto client = s.shared_client(*ptr, span)) {
      *ptr = *client;
      p->host_sides |= host;
    } else if (s.graph_staging.contains(*ptr, span)) {
      p->host_sides |= staging;
    }
  };
  if (!p->dst_array) side(&p->dst, side_span(p->dst_pitch, p->dst_slice, *p), proto::kHostDst, proto::kStagingDst);
  if (!p->src_array) side(&p->src, side_span(p->src_pitch, p->src_slice, *p), proto::kHostSrc, proto::kStagingSrc);
}

namespace {

#define RGPU_GRAPH(name)                             \
  auto name = req.args.get<uint64_t>();              \
  if (!s.graphs.graph(name)) return cudaErrorInvalidValue
#define RGPU_NODE(name)                              \
  auto name = req.args.get<uint64_t>();              \
  if (!s.graphs.node(name)) return cudaErrorInvalidValue
#define RGPU_EXEC(name)                              \
  auto name = req.args.get<uint64_t>();              \
  if (!s.graphs.exec(name)) return cudaErrorInvalidValue
#define RGPU_STREAM(name)                            \
  auto name = req.args.get<uint64_t>();              \
  if (!s.valid_stream(name)) return cudaErrorInvalidResourceHandle

int32_t graph_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (flags != 0) return cudaErrorInvalidValue;
  if (!s.graphs.room_for_graph()) return cudaErrorMemoryAllocation;
  uint64_t g = 0;
  if (int32_t e = graphs(s).graph_create(&g)) return e;
  s.graphs.add_graph(g, 0);
  out.put(g);
  return cudaSuccess;
}

// Graph memory freed: the session's no more, and its job's amount back.
void release_graph_memory(SessionContext& s, uint64_t base) {
  s.allocations.remove(base);
  s.quota.freed(SessionQuota::Kind::memory, base);
}

// Memory the graph allocates and frees itself ends with it; what it leaves
// allocated stays the session's until freed (CUDA's rules).
int32_t drop_graph(SessionContext& s, uint64_t g) {
  for (uint64_t base : s.graphs.self_freed_allocations(g)) release_graph_memory(s, base);
  s.graphs.remove_graph(g);
  return graphs(s).graph_destroy(g);
}

int32_t graph_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto g = req.args.get<uint64_t>();
  req.args.expect_end();
  // Child graphs belong to their node, a capture's graph to the capture.
  if (!s.graphs.own_graph(g)) return cudaErrorInvalidValue;
  return drop_graph(s, g);
}

int32_t graph_clone(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  req.args.expect_end();
  if (!s.graphs.room_for_graph()) return cudaErrorMemoryAllocation;
  uint64_t c = 0;
  if (int32_t e = graphs(s).graph_clone(&c, g)) return e;
  s.graphs.add_graph(c, 0);
  out.put(c);
  return cudaSuccess;
}

int32_t graph_add_node(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  Handles deps = get_handles(req.args);
  GraphNodeParams p = proto::get_node(req.args);
  req.args.expect_end();
  if (!nodes_in(s, deps, g)) return cudaErrorInvalidValue;
  if (int32_t e = check_node(s, p)) return e;
  // A graph moved into a child graph node must be the application's own, and
  // not the graph it is added to.
  const bool moves = p.type == cudaGraphNodeTypeGraph && p.value == cudaGraphChildGraphOwnershipMove;
  if (p.type == cudaGraphNodeTypeGraph && p.value > cudaGraphChildGraphOwnershipMove) return cudaErrorInvalidValue;
  if (moves && (!s.graphs.own_graph(p.handle) || p.handle == g)) return cudaErrorInvalidValue;
  // A child graph node, or a conditional one with its bodies, makes graphs too.
  const bool makes_graphs = p.type == cudaGraphNodeTypeGraph || p.type == cudaGraphNodeTypeConditional;
  if (!s.graphs.room_for_node() || (makes_graphs && !s.graphs.room_for_graph())) return cudaErrorMemoryAllocation;
  uint64_t n = 0;
  GraphNodeParams made;
  auto add = [&]() -> int32_t {
    if (int32_t e = graphs(s).add_node(&n, g, deps, to_backend(s, p))) return e;
    s.graphs.add_node(n, g);
    return p.type == cudaGraphNodeTypeMemAlloc ? graphs(s).node_params(n, &made) : cudaSuccess;
  };
  // An allocation node's memory counts against the job from the node on.
  if (int32_t e = p.type == cudaGraphNodeTypeMemAlloc
                      ? s.quota.allocate(static_cast<int>(p.value), p.width, SessionQuota::Kind::memory, &made.dst, add)
                      : add())
    return e;
  out.put(n);
  if (moves) s.graphs.move_into(p.handle, n);
  if (p.type == cudaGraphNodeTypeMemAlloc) {
    // The graph's memory is the session's: nodes, kernels and copies may use
    // it (the GPU faults on it outside the graph's allocation, as locally).
    s.allocations.add(made.dst, made.width);
    s.graphs.add_allocation(made.dst, g);
    out.put(made.dst);
  }
  if (p.type == cudaGraphNodeTypeMemFree) s.graphs.allocation_freed_in(p.dst, g);
  if (p.type == cudaGraphNodeTypeConditional) {
    // Its bodies, made with it, are graphs the application adds nodes to.
    GraphNodeParams made;
    if (int32_t e = graphs(s).node_params(n, &made)) return e;
    s.graphs.add_bodies(n, made.bodies);
    out.put<uint32_t>(static_cast<uint32_t>(made.bodies.size()));
    for (uint64_t b : made.bodies) out.put(b);
  }
  return cudaSuccess;
}

int32_t node_get_params(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  req.args.expect_end();
  GraphNodeParams p;
  if (int32_t e = graphs(s).node_params(n, &p)) return e;
  if (p.type == cudaGraphNodeTypeGraph) s.graphs.add_graph(p.handle, n);
  if (p.type == cudaGraphNodeTypeConditional) s.graphs.add_bodies(n, p.bodies);
  if (p.type == cudaGraphNodeTypeMemcpy) from_backend_copy(s, &p);
  if (p.type == cudaGraphNodeTypeHost) p.handle = s.host_nodes.id(p.handle);
  proto::put_node(out, p);
  return cudaSuccess;
}

int32_t node_set_params(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_NODE(n);
  GraphNodeParams p = proto::get_node(req.args);
  req.args.expect_end();
  if (int32_t e = check_node(s, p)) return e;
  return graphs(s).set_node_params(n, to_backend(s, p));
}

int32_t node_get_type(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  req.args.expect_end();
  int32_t type = 0;
  if (int32_t e = graphs(s).node_type(n, &type)) return e;
  out.put(type);
  return cudaSuccess;
}

int32_t destroy_node(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_NODE(n);
  req.args.expect_end();
  s.graphs.remove_node(n);
  return graphs(s).destroy_node(n);
}

// Nodes of graph g the backend listed: they become nameable.
int32_t reply_nodes(SessionContext& s, uint64_t g, int32_t e, const Handles& nodes, proto::Writer& out) {
  if (e) return e;
  for (uint64_t n : nodes) s.graphs.add_node(n, g);
  put_handles(out, nodes);
  return cudaSuccess;
}

template <int32_t (GraphBackend::*List)(uint64_t, Handles*)>
int32_t graph_nodes(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  req.args.expect_end();
  Handles nodes;
  int32_t e = (graphs(s).*List)(g, &nodes);
  return reply_nodes(s, g, e, nodes, out);
}

int32_t graph_get_edges(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  req.args.expect_end();
  Handles from, to;
  if (int32_t e = graphs(s).edges(g, &from, &to)) return e;
  for (uint64_t n : from) s.graphs.add_node(n, g);
  for (uint64_t n : to) s.graphs.add_node(n, g);
  put_handles(out, from);
  put_handles(out, to);
  return cudaSuccess;
}

template <int32_t (GraphBackend::*List)(uint64_t, Handles*)>
int32_t node_neighbours(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  req.args.expect_end();
  Handles nodes;
  int32_t e = (graphs(s).*List)(n, &nodes);
  // Neighbours share the node's graph.
  return reply_nodes(s, s.graphs.graph_of(n), e, nodes, out);
}

template <bool Add>
int32_t change_dependencies(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_GRAPH(g);
  Handles from = get_handles(req.args), to = get_handles(req.args);
  req.args.expect_end();
  if (from.size() != to.size() || !nodes_in(s, from, g) || !nodes_in(s, to, g)) return cudaErrorInvalidValue;
  return Add ? graphs(s).add_dependencies(g, from, to) : graphs(s).remove_dependencies(g, from, to);
}

int32_t node_find_in_clone(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  RGPU_GRAPH(clone);
  req.args.expect_end();
  uint64_t found = 0;
  if (int32_t e = graphs(s).find_in_clone(&found, n, clone)) return e;
  s.graphs.add_node(found, clone);
  out.put(found);
  return cudaSuccess;
}

int32_t child_graph_node_get_graph(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  req.args.expect_end();
  uint64_t g = 0;
  if (int32_t e = graphs(s).child_graph(n, &g)) return e;
  s.graphs.add_graph(g, n);
  out.put(g);
  return cudaSuccess;
}

int32_t conditional_handle_create(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  auto default_value = req.args.get<uint32_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (flags & ~static_cast<uint32_t>(cudaGraphCondAssignDefault)) return cudaErrorInvalidValue;
  if (!s.graphs.room_for_conditional()) return cudaErrorMemoryAllocation;
  uint64_t handle = 0;
  if (int32_t e = graphs(s).conditional_handle_create(&handle, g, default_value, flags)) return e;
  s.graphs.add_conditional(handle, g);
  out.put(handle);
  return cudaSuccess;
}

// What each launch of `g` allocates for the application and frees of it.
GraphMemoryEffect graph_memory_effect(SessionContext& s, uint64_t g) {
  std::vector<uint64_t> nodes;
  if (graphs(s).nodes(g, &nodes)) return {};
  std::vector<GraphMemoryNode> memory;
  for (uint64_t n : nodes) {
    int32_t type = 0;
    GraphNodeParams p;
    if (graphs(s).node_type(n, &type) ||
        (type != cudaGraphNodeTypeMemAlloc && type != cudaGraphNodeTypeMemFree) || graphs(s).node_params(n, &p))
      continue;
    memory.push_back({p.dst, p.width, type == cudaGraphNodeTypeMemFree});
  }
  return memory_effect(memory);
}

// A copy of the graph the executable graph runs, for a move (exec_graph_copies.hpp).
void keep_copy(SessionContext& s, uint64_t exec, uint64_t graph, uint64_t flags) {
  if (!s.exec_copies.keep(graphs(s), exec, graph, flags))
    RGPU_LOG(debug, "executable graph %#llx: its graph could not be copied; it cannot move",
             static_cast<unsigned long long>(exec));
}

int32_t graph_instantiate(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  auto flags = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.graphs.room_for_exec()) return cudaErrorMemoryAllocation;
  uint64_t x = 0;
  if (int32_t e = graphs(s).instantiate(&x, g, flags)) return e;
  s.graphs.add_exec(x, g);
  s.graphs.set_exec_memory(x, graph_memory_effect(s, g));
  keep_copy(s, x, g, flags);
  out.put(x);
  return cudaSuccess;
}

int32_t graph_exec_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto x = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.graphs.remove_exec(x)) return cudaErrorInvalidValue;
  s.exec_copies.drop(graphs(s), x);
  return graphs(s).exec_destroy(x);
}

template <int32_t (GraphBackend::*OnStream)(uint64_t, uint64_t)>
int32_t exec_on_stream(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EXEC(x);
  RGPU_STREAM(stream);
  req.args.expect_end();
  return (graphs(s).*OnStream)(x, stream);
}

// A launch allocates again what the application freed of the graph's memory
// outside it since the last one (CUDA allows that after any launch): the
// session owns it, and its job is charged for it, once more. What it frees
// of other graphs' memory is the session's no more.
int32_t graph_launch(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EXEC(x);
  RGPU_STREAM(stream);
  req.args.expect_end();
  GraphMemoryEffect effect = s.graphs.exec_memory(x);
  for (const auto& [allocated, size] : effect.allocated) {
    uint64_t base = allocated;
    if (s.allocations.contains(base, 1)) continue;
    auto own = [&, bytes = size] {
      s.allocations.add(base, bytes);
      return int32_t{cudaSuccess};
    };
    if (int32_t e = s.quota.allocate(req.header().device, size, SessionQuota::Kind::memory, &base, own)) return e;
  }
  if (int32_t e = graphs(s).launch_graph(x, stream)) return e;
  for (uint64_t base : effect.freed) release_graph_memory(s, base);
  return cudaSuccess;
}

int32_t graph_exec_update(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_EXEC(x);
  RGPU_GRAPH(g);
  req.args.expect_end();
  int32_t result = cudaGraphExecUpdateError;
  uint64_t error_node = 0;
  int32_t e = graphs(s).exec_update(x, g, &result, &error_node);
  if (error_node) s.graphs.add_node(error_node, g);
  if (e == cudaSuccess) {
    uint64_t flags = 0;
    graphs(s).exec_flags(x, &flags);
    keep_copy(s, x, g, flags);
  }
  out.put(result).put(error_node);
  // The outcome travels with the error: the client reports both.
  return e == cudaErrorGraphExecUpdateFailure ? cudaSuccess : e;
}

// A node of the graph the executable graph came from (or of its conditional bodies).
bool exec_node_known(SessionContext& s, uint64_t exec, uint64_t node) {
  if (s.graphs.node_under(node, s.graphs.exec_source(exec))) return true;
  RGPU_LOG(debug, "executable graph %#llx: node %#llx is not in its source graph %#llx (the node's graph: %#llx)",
           static_cast<unsigned long long>(exec), static_cast<unsigned long long>(node),
           static_cast<unsigned long long>(s.graphs.exec_source(exec)),
           static_cast<unsigned long long>(s.graphs.graph_of(node)));
  return false;
}

#define RGPU_EXEC_NODE(x, n)                                                      \
  RGPU_EXEC(x);                                                                   \
  auto n = req.args.get<uint64_t>();                                              \
  if (!exec_node_known(s, x, n)) return cudaErrorInvalidValue

int32_t graph_exec_node_set_params(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EXEC_NODE(x, n);
  GraphNodeParams p = proto::get_node(req.args);
  req.args.expect_end();
  if (int32_t e = check_node(s, p)) {
    RGPU_LOG(debug, "executable graph %#llx: new parameters of node %#llx (type %d) refused: error %d",
             static_cast<unsigned long long>(x), static_cast<unsigned long long>(n), p.type, e);
    return e;
  }
  const GraphNodeParams backend_params = to_backend(s, p);
  int32_t e = graphs(s).exec_set_params(x, s.exec_copies.exec_node(x, n), backend_params);
  if (e == cudaSuccess) s.exec_copies.set_params(graphs(s), x, n, backend_params);
  if (e)
    RGPU_LOG(debug,
             "executable graph %#llx: the driver refused new parameters of node %#llx (type %d: dst %#llx pitch %llu, "
             "src %#llx pitch %llu, %llu x %llu x %llu, host sides %#x): error %d",
             static_cast<unsigned long long>(x), static_cast<unsigned long long>(n), p.type,
             static_cast<unsigned long long>(p.dst), static_cast<unsigned long long>(p.dst_pitch),
             static_cast<unsigned long long>(p.src), static_cast<unsigned long long>(p.src_pitch),
             static_cast<unsigned long long>(p.width), static_cast<unsigned long long>(p.height),
             static_cast<unsigned long long>(p.depth), p.host_sides, e);
  return e;
}

int32_t node_set_enabled(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_EXEC_NODE(x, n);
  auto enabled = req.args.get<uint32_t>();
  req.args.expect_end();
  if (int32_t e = graphs(s).set_enabled(x, s.exec_copies.exec_node(x, n), enabled)) return e;
  s.exec_copies.set_enabled(x, n, enabled);
  return cudaSuccess;
}

int32_t node_get_enabled(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_EXEC_NODE(x, n);
  req.args.expect_end();
  uint32_t enabled = 0;
  if (int32_t e = graphs(s).get_enabled(x, s.exec_copies.exec_node(x, n), &enabled)) return e;
  out.put(enabled);
  return cudaSuccess;
}

int32_t graph_exec_get_flags(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_EXEC(x);
  req.args.expect_end();
  uint64_t flags = 0;
  if (int32_t e = graphs(s).exec_flags(x, &flags)) return e;
  out.put(flags);
  return cudaSuccess;
}

int32_t graph_debug_dot_print(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_GRAPH(g);
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  std::string dot;
  if (int32_t e = graphs(s).dot_print(g, flags, &dot)) return e;
  out.put_string(dot);
  return cudaSuccess;
}

int32_t stream_begin_capture(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  auto mode = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.graphs.room_for_graph()) return cudaErrorMemoryAllocation;
  return graphs(s).begin_capture(stream, mode);
}

int32_t stream_begin_capture_to_graph(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  RGPU_GRAPH(g);
  Handles deps = get_handles(req.args);
  auto mode = req.args.get<int32_t>();
  req.args.expect_end();
  // The application's own graph, or a conditional node's body (CUDA's, not to be destroyed anyway).
  bool body = s.graphs.conditional_body(g);
  if ((!body && !s.graphs.own_graph(g)) || !nodes_in(s, deps, g)) return cudaErrorInvalidValue;
  if (int32_t e = graphs(s).begin_capture_to_graph(stream, g, deps, mode)) return e;
  // Not to be destroyed while the capture adds to it.
  if (!body) s.graphs.set_owner(g, GraphTable::kCapturedInto);
  return cudaSuccess;
}

int32_t stream_end_capture(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_STREAM(stream);
  bool wants_graph = req.args.get<uint8_t>() != 0;
  req.args.expect_end();
  CaptureInfo info;
  graphs(s).capture_info(stream, &info);
  // Without a graph output (CUDA allows it, measured on the H100) a new
  // capture's graph is nobody's: it is destroyed; a capture into an
  // existing graph (cudaStreamBeginCaptureToGraph) leaves that graph.
  bool into_existing = info.graph && (s.graphs.owner(info.graph) == GraphTable::kCapturedInto ||
                                      s.graphs.conditional_body(info.graph));
  // The capture's graph, if the client saw it while capturing.
  bool seen = info.graph && s.graphs.owner(info.graph) == GraphTable::kCapturing;
  // The application's graph it added to is the application's again, whatever the outcome.
  if (info.graph && s.graphs.owner(info.graph) == GraphTable::kCapturedInto) s.graphs.set_owner(info.graph, 0);
  uint64_t g = 0;
  if (int32_t e = graphs(s).end_capture(stream, &g)) {
    // A failed capture's graph is gone (unless it was the application's own).
    if (seen) s.graphs.remove_graph(info.graph);
    // An asynchronous call the capture could not hold (a copy with host
    // memory) left its error pending: the invalidation reports it now, as
    // CUDA reports only that once the call itself has failed.
    if (e == cudaErrorStreamCaptureInvalidated && req.lane().deferred == cudaErrorStreamCaptureUnsupported)
      req.lane().deferred = cudaSuccess;
    return e;
  }
  if (!wants_graph && !into_existing) {
    out.put<uint64_t>(0);
    return drop_graph(s, g);
  }
  if (seen) s.graphs.set_owner(g, 0);
  s.graphs.add_graph(g, 0);
  out.put(g);
  return cudaSuccess;
}

int32_t stream_get_capture_info(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_STREAM(stream);
  req.args.expect_end();
  CaptureInfo info;
  if (int32_t e = graphs(s).capture_info(stream, &info)) return e;
  if (info.status != cudaStreamCaptureStatusNone && info.graph) {
    s.graphs.add_graph(info.graph, GraphTable::kCapturing);
    for (uint64_t n : info.dependencies) s.graphs.add_node(n, info.graph);
  }
  out.put(info.status).put(info.id).put(info.graph);
  put_handles(out, info.dependencies);
  return cudaSuccess;
}

int32_t stream_update_capture_dependencies(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_STREAM(stream);
  Handles deps = get_handles(req.args);
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  CaptureInfo info;
  if (int32_t e = graphs(s).capture_info(stream, &info)) return e;
  if (info.status == cudaStreamCaptureStatusNone) return cudaErrorIllegalState;
  if (!nodes_in(s, deps, info.graph)) return cudaErrorInvalidValue;
  return graphs(s).update_capture_dependencies(stream, deps, flags);
}

int32_t thread_exchange_stream_capture_mode(SessionContext& s, Request& req, proto::Writer& out) {
  auto mode = req.args.get<int32_t>();
  req.args.expect_end();
  if (int32_t e = graphs(s).exchange_capture_mode(&mode)) return e;
  out.put(mode);
  return cudaSuccess;
}

int32_t device_get_graph_mem_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  auto device = req.args.get<int32_t>();
  auto attr = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  uint64_t value = 0;
  if (int32_t e = graphs(s).get_graph_mem_attribute(device, attr, &value)) return e;
  out.put(value);
  return cudaSuccess;
}

int32_t device_set_graph_mem_attribute(SessionContext& s, Request& req, proto::Writer&) {
  auto device = req.args.get<int32_t>();
  auto attr = req.args.get<int32_t>();
  auto value = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  return graphs(s).set_graph_mem_attribute(device, attr, value);
}

int32_t kernel_node_get_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_NODE(n);
  auto attr = req.args.get<int32_t>();
  req.args.expect_end();
  if (!kernel_node_attribute(attr)) return cudaErrorInvalidValue;
  cudaLaunchAttributeValue value{};
  if (int32_t e = graphs(s).kernel_node_get_attribute(n, attr, &value)) return e;
  out.put(value);
  return cudaSuccess;
}

int32_t kernel_node_set_attribute(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_NODE(n);
  auto attr = req.args.get<int32_t>();
  auto value = req.args.get<cudaLaunchAttributeValue>();
  req.args.expect_end();
  if (int32_t e = check_kernel_node_attribute(s, attr, value)) return e;
  return graphs(s).kernel_node_set_attribute(n, attr, value);
}

int32_t kernel_node_copy_attributes(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_NODE(dst);
  RGPU_NODE(src);
  req.args.expect_end();
  return graphs(s).kernel_node_copy_attributes(dst, src);
}

int32_t user_object_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto id = req.args.get<uint64_t>();
  auto refs = req.args.get<uint32_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!HostNodeRecords::valid(id) || refs == 0) return cudaErrorInvalidValue;
  if (!s.graphs.room_for_user_object()) return cudaErrorMemoryAllocation;
  graphs(s).set_host_node_runner(HostNodeRecords::run);
  uint64_t object = 0;
  if (int32_t e = graphs(s).user_object_create(&object, s.host_nodes.record(id), refs, flags)) return e;
  s.graphs.add_user_refs(object, refs);
  out.put(object);
  return cudaSuccess;
}

int32_t graph_staging_alloc(SessionContext& s, Request& req, proto::Writer& out) {
  auto bytes = req.args.get<uint64_t>();
  req.args.expect_end();
  // Taken while the client's thread may capture a stream, where CUDA
  // refuses allocations in the global mode: relaxed meanwhile.
  int32_t mode = cudaStreamCaptureModeRelaxed;
  if (int32_t e = graphs(s).exchange_capture_mode(&mode)) return e;
  uint64_t base = 0;
  int32_t e = s.graph_staging.allocate(req.header().device, bytes, &base);
  graphs(s).exchange_capture_mode(&mode);
  if (e) return e;
  out.put(base);
  return cudaSuccess;
}

int32_t user_object_retain(SessionContext& s, Request& req, proto::Writer&) {
  auto object = req.args.get<uint64_t>();
  auto count = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.graphs.user_object(object) || count == 0) return cudaErrorInvalidValue;
  if (int32_t e = graphs(s).user_object_retain(object, count)) return e;
  s.graphs.add_user_refs(object, count);
  return cudaSuccess;
}

int32_t user_object_release(SessionContext& s, Request& req, proto::Writer&) {
  auto object = req.args.get<uint64_t>();
  auto count = req.args.get<uint32_t>();
  req.args.expect_end();
  if (count == 0 || !s.graphs.take_user_refs(object, count)) return cudaErrorInvalidValue;
  return graphs(s).user_object_release(object, count);
}

int32_t graph_retain_user_object(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_GRAPH(g);
  auto object = req.args.get<uint64_t>();
  auto count = req.args.get<uint32_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.graphs.user_object(object) || count == 0 || (flags & ~cudaGraphUserObjectMove))
    return cudaErrorInvalidValue;
  // Moved references stop being the application's.
  if ((flags & cudaGraphUserObjectMove) && !s.graphs.take_user_refs(object, count)) return cudaErrorInvalidValue;
  return graphs(s).graph_retain_user_object(g, object, count, flags);
}

int32_t graph_release_user_object(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_GRAPH(g);
  auto object = req.args.get<uint64_t>();
  auto count = req.args.get<uint32_t>();
  req.args.expect_end();
  if (!s.graphs.user_object(object) || count == 0) return cudaErrorInvalidValue;
  return graphs(s).graph_release_user_object(g, object, count);
}

#undef RGPU_GRAPH
#undef RGPU_NODE
#undef RGPU_EXEC
#undef RGPU_STREAM
#undef RGPU_EXEC_NODE

}  // namespace

void register_graph_handlers(Dispatcher& d) {
  d.add(proto::kOpGraphCreate, graph_create);
  d.add(proto::kOpGraphDestroy, graph_destroy);
  d.add(proto::kOpGraphClone, graph_clone);
  d.add(proto::kOpGraphAddNode, graph_add_node);
  d.add(proto::kOpGraphNodeGetParams, node_get_params);
  d.add(proto::kOpGraphNodeSetParams, node_set_params);
  d.add(proto::kOpGraphNodeGetType, node_get_type);
  d.add(proto::kOpGraphDestroyNode, destroy_node);
  d.add(proto::kOpGraphGetNodes, graph_nodes<&GraphBackend::nodes>);
  d.add(proto::kOpGraphGetRootNodes, graph_nodes<&GraphBackend::root_nodes>);
  d.add(proto::kOpGraphGetEdges, graph_get_edges);
  d.add(proto::kOpGraphNodeGetDependencies, node_neighbours<&GraphBackend::dependencies>);
  d.add(proto::kOpGraphNodeGetDependentNodes, node_neighbours<&GraphBackend::dependents>);
  d.add(proto::kOpGraphAddDependencies, change_dependencies<true>);
  d.add(proto::kOpGraphRemoveDependencies, change_dependencies<false>);
  d.add(proto::kOpGraphNodeFindInClone, node_find_in_clone);
  d.add(proto::kOpGraphChildGraphNodeGetGraph, child_graph_node_get_graph);
  d.add(proto::kOpGraphConditionalHandleCreate, conditional_handle_create);
  d.add(proto::kOpGraphInstantiate, graph_instantiate);
  d.add(proto::kOpGraphExecDestroy, graph_exec_destroy);
  d.add(proto::kOpGraphLaunch, graph_launch);
  d.add(proto::kOpGraphUpload, exec_on_stream<&GraphBackend::upload>);
  d.add(proto::kOpGraphExecUpdate, graph_exec_update);
  d.add(proto::kOpGraphExecNodeSetParams, graph_exec_node_set_params);
  d.add(proto::kOpGraphNodeSetEnabled, node_set_enabled);
  d.add(proto::kOpGraphNodeGetEnabled, node_get_enabled);
  d.add(proto::kOpGraphExecGetFlags, graph_exec_get_flags);
  d.add(proto::kOpGraphDebugDotPrint, graph_debug_dot_print);
  d.add(proto::kOpStreamBeginCapture, stream_begin_capture);
  d.add(proto::kOpStreamBeginCaptureToGraph, stream_begin_capture_to_graph);
  d.add(proto::kOpStreamEndCapture, stream_end_capture);
  d.add(proto::kOpStreamGetCaptureInfo, stream_get_capture_info);
  d.add(proto::kOpStreamUpdateCaptureDependencies, stream_update_capture_dependencies);
  d.add(proto::kOpThreadExchangeStreamCaptureMode, thread_exchange_stream_capture_mode);
  d.add(proto::kOpDeviceGetGraphMemAttribute, device_get_graph_mem_attribute);
  d.add(proto::kOpDeviceSetGraphMemAttribute, device_set_graph_mem_attribute);
  d.add(proto::kOpGraphKernelNodeGetAttribute, kernel_node_get_attribute);
  d.add(proto::kOpGraphKernelNodeSetAttribute, kernel_node_set_attribute);
  d.add(proto::kOpGraphKernelNodeCopyAttributes, kernel_node_copy_attributes);
  d.add(proto::kOpGraphStagingAlloc, graph_staging_alloc);
  d.add(proto::kOpUserObjectCreate, user_object_create);
  d.add(proto::kOpUserObjectRetain, user_object_retain);
  d.add(proto::kOpUserObjectRelease, user_object_release);
  d.add(proto::kOpGraphRetainUserObject, graph_retain_user_object);
  d.add(proto::kOpGraphReleaseUserObject, graph_release_user_object);
}

}  // namespace rgpu::server
