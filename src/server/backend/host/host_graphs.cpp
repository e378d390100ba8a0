#include "server/backend/host/host_graphs.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "common/log.hpp"

namespace rgpu::server {
namespace {

template <typename T>
T* as(uint64_t h) {
  return reinterpret_cast<T*>(h);
}
uint64_t handle(const void* p) { return reinterpret_cast<uint64_t>(p); }

thread_local int32_t t_capture_mode = cudaStreamCaptureModeGlobal;

std::unique_ptr<HostGraph> clone(const HostGraph& g);

// n takes from's parameters; the graphs from embeds (a child graph, a
// conditional node's bodies) are copied, not shared.
void copy_params(HostNode& n, const HostNode& from) {
  n.p = from.p;
  n.child.reset();
  n.bodies.clear();
  n.p.bodies.clear();
  if (from.child) {
    n.child = clone(*from.child);
    n.p.handle = handle(n.child.get());
  }
  for (const auto& b : from.bodies) {
    n.bodies.push_back(clone(*b));
    n.p.bodies.push_back(handle(n.bodies.back().get()));
  }
}

// A deep copy whose nodes remember the node they were copied from; it holds
// references of its own to the user objects the original holds.
std::unique_ptr<HostGraph> clone(const HostGraph& g) {
  auto c = std::make_unique<HostGraph>();
  for (const auto& [o, n] : g.user_refs) {
    o->refs += n;
    c->user_refs[o] = n;
  }
  c->conditionals = g.conditionals;
  c->body = g.body;
  std::unordered_map<const HostNode*, HostNode*> map;
  for (const auto& n : g.nodes) {
    auto m = std::make_unique<HostNode>();
    copy_params(*m, *n);
    m->graph = c.get();
    m->origin = n.get();
    m->enabled = n->enabled;
    m->attributes = n->attributes;
    map[n.get()] = m.get();
    c->nodes.push_back(std::move(m));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const HostNode* d : g.nodes[i]->deps) c->nodes[i]->deps.push_back(map.at(d));
  return c;
}

// Nodes in an order that puts each after its dependencies; false on a cycle.
bool topological(const HostGraph& g, std::vector<const HostNode*>* order) {
  std::unordered_map<const HostNode*, size_t> waiting;
  std::unordered_map<const HostNode*, std::vector<const HostNode*>> dependents;
  for (const auto& n : g.nodes) {
    waiting[n.get()] = n->deps.size();
    for (const HostNode* d : n->deps) dependents[d].push_back(n.get());
  }
  for (const auto& n : g.nodes)
    if (n->deps.empty()) order->push_back(n.get());
  for (size_t i = 0; i < order->size(); ++i)
    for (const HostNode* m : dependents[(*order)[i]])
      if (--waiting[m] == 0) order->push_back(m);
  return order->size() == g.nodes.size();
}

bool same_shape(const HostGraph& a, const HostGraph& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  std::unordered_map<const HostNode*, size_t> ia, ib;
  for (size_t i = 0; i < a.nodes.size(); ++i) ia[a.nodes[i].get()] = i, ib[b.nodes[i].get()] = i;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const auto &x = *a.nodes[i], &y = *b.nodes[i];
    if (x.deps.size() != y.deps.size()) return false;
    for (size_t j = 0; j < x.deps.size(); ++j)
      if (ia[x.deps[j]] != ib[y.deps[j]]) return false;
  }
  return true;
}

const char* type_name(int32_t type) {
  switch (type) {
    case cudaGraphNodeTypeKernel: return "KERNEL";
    case cudaGraphNodeTypeMemcpy: return "MEMCPY";
    case cudaGraphNodeTypeMemset: return "MEMSET";
    case cudaGraphNodeTypeHost: return "HOST";
    case cudaGraphNodeTypeGraph: return "CHILD_GRAPH";
    case cudaGraphNodeTypeEventRecord: return "EVENT_RECORD";
    case cudaGraphNodeTypeWaitEvent: return "WAIT_EVENT";
    case cudaGraphNodeTypeExtSemaphoreSignal: return "EXT_SEMAS_SIGNAL";
    case cudaGraphNodeTypeExtSemaphoreWait: return "EXT_SEMAS_WAIT";
    case cudaGraphNodeTypeConditional: return "CONDITIONAL";
    case proto::kGraphNodeTypeBatchMemOp: return "BATCH_MEM_OP";
    default: return "EMPTY";
  }
}

// As CUDA's update: a copy node's sides stay arrays or memory.
bool same_memory_types(const GraphNodeParams& a, const GraphNodeParams& b) {
  return !a.dst_array == !b.dst_array && !a.src_array == !b.src_array;
}

// As CUDA: only kernel, memset and memcpy nodes can be disabled.
bool can_disable(const HostNode& n) {
  return n.p.type == cudaGraphNodeTypeKernel || n.p.type == cudaGraphNodeTypeMemset ||
         n.p.type == cudaGraphNodeTypeMemcpy;
}

// What CUDA lets a conditional node's body hold, child graphs' nodes included.
bool fits_body(int32_t type, const HostGraph* child) {
  switch (type) {
    case cudaGraphNodeTypeKernel:
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeMemcpy:
    case cudaGraphNodeTypeConditional:
      return true;
    case cudaGraphNodeTypeGraph:
      for (const auto& n : child->nodes)
        if (!fits_body(n->p.type, n->child.get())) return false;
      return true;
    default:
      return false;
  }
}

// Whether a conditional node of `type` may have `size` bodies.
bool conditional_size(uint32_t type, uint64_t size) {
  switch (type) {
    case cudaGraphCondTypeIf: return size == 1 || size == 2;
    case cudaGraphCondTypeWhile: return size == 1;
    case cudaGraphCondTypeSwitch: return size >= 1;
    default: return false;
  }
}

// A launch gives the handles asked to their default values, nested graphs' too.
void assign_defaults(const HostGraph& g) {
  for (const auto& c : g.conditionals)
    if (c->assign_default) c->value = c->default_value;
  for (const auto& n : g.nodes) {
    if (n->child) assign_defaults(*n->child);
    for (const auto& b : n->bodies) assign_defaults(*b);
  }
}

}  // namespace

namespace {

// The user objects a graph (and the graphs inside it) holds stop calling
// their destructors' runner.
void silence(const HostGraph& g) {
  for (const auto& [o, n] : g.user_refs) o->runner = nullptr;
  for (const auto& node : g.nodes)
    if (node->child) silence(*node->child);
}

}  // namespace

// The session is over when the backend goes: nobody is left to run a user
// object's destructor for.
HostGraphs::~HostGraphs() {
  for (const auto& [p, g] : graphs_) silence(*g);
  for (const auto& [p, x] : execs_) silence(*x->graph);
}

void release_user_object(HostUserObject* o, uint64_t n) {
  o->refs -= n;
  if (o->refs != 0) return;
  if (o->runner) o->runner(o->record);
  delete o;
}

bool HostGraphs::capturing(uint64_t stream) {
  std::lock_guard lock(mutex_);
  return captures_.count(stream) != 0;
}

int32_t HostGraphs::record(uint64_t stream, const GraphNodeParams& p) {
  std::lock_guard lock(mutex_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return cudaErrorIllegalState;
  auto& sc = it->second;
  if (sc.capture->invalidated) return cudaErrorStreamCaptureInvalidated;
  HostNode* n;
  if (int32_t e = add(&n, *sc.capture->graph, sc.deps, p)) {
    sc.capture->invalidated = true;
    return e;
  }
  sc.deps = {n};
  return cudaSuccess;
}

int32_t HostGraphs::refuse(uint64_t stream) {
  std::lock_guard lock(mutex_);
  if (auto it = captures_.find(stream); it != captures_.end()) it->second.capture->invalidated = true;
  return cudaErrorStreamCaptureUnsupported;
}

bool HostGraphs::capture_event_record(uint64_t event, uint64_t stream) {
  std::lock_guard lock(mutex_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    event_captures_.erase(event);
    return false;
  }
  event_captures_[event] = it->second;
  return true;
}

bool HostGraphs::capture_event_wait(uint64_t stream, uint64_t event, unsigned flags, int32_t* error) {
  std::lock_guard lock(mutex_);
  *error = cudaSuccess;
  auto ev = event_captures_.find(event);
  bool captured_event = ev != event_captures_.end() && !ev->second.capture->ended;
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    if (!captured_event) return false;
    captures_[stream] = ev->second;  // the stream joins the capture (a fork)
    return true;
  }
  if (captured_event) {
    if (ev->second.capture != it->second.capture) {
      it->second.capture->invalidated = true;
      *error = cudaErrorStreamCaptureIsolation;
      return true;
    }
    for (HostNode* d : ev->second.deps)
      if (std::find(it->second.deps.begin(), it->second.deps.end(), d) == it->second.deps.end())
        it->second.deps.push_back(d);
    return true;
  }
  // An event from outside the capture: a wait node only when asked for.
  if (!(flags & cudaEventWaitExternal)) {
    it->second.capture->invalidated = true;
    *error = cudaErrorStreamCaptureIsolation;
    return true;
  }
  GraphNodeParams p;
  p.type = cudaGraphNodeTypeWaitEvent;
  p.handle = event;
  HostNode* n;
  *error = add(&n, *it->second.capture->graph, it->second.deps, p);
  if (!*error) it->second.deps = {n};
  return true;
}

int32_t HostGraphs::add(HostNode** out, HostGraph& g, std::vector<HostNode*> deps, const GraphNodeParams& p) {
  auto n = std::make_unique<HostNode>();
  n->p = p;
  n->p.bodies.clear();
  n->graph = &g;
  n->deps = std::move(deps);
  if (g.body && !fits_body(p.type, p.type == cudaGraphNodeTypeGraph ? as<HostGraph>(p.handle) : nullptr))
    return cudaErrorInvalidValue;
  switch (p.type) {
    case cudaGraphNodeTypeGraph:
      if (p.value == cudaGraphChildGraphOwnershipMove) {
        auto moved = graphs_.find(as<HostGraph>(p.handle));
        if (moved == graphs_.end()) return cudaErrorInvalidValue;
        n->child = std::move(moved->second);
        graphs_.erase(moved);
      } else {
        n->child = clone(*as<HostGraph>(p.handle));
      }
      n->p.handle = handle(n->child.get());
      n->p.value = cudaGraphChildGraphOwnershipClone;
      break;
    case cudaGraphNodeTypeConditional:
      if (!conditional_size(p.value, p.width)) return cudaErrorInvalidValue;
      for (uint64_t i = 0; i < p.width; ++i) {
        n->bodies.push_back(std::make_unique<HostGraph>());
        n->bodies.back()->body = true;
        n->p.bodies.push_back(handle(n->bodies.back().get()));
      }
      break;
    case cudaGraphNodeTypeMemAlloc:
      // A captured stream-ordered allocation comes with its memory.
      if (!p.dst)
        if (int32_t e = hooks_.allocate(&n->p.dst, p.width)) return e;
      break;
    case cudaGraphNodeTypeKernel:
    case cudaGraphNodeTypeMemcpy:
    case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeMemFree:
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeHost:
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
    case proto::kGraphNodeTypeBatchMemOp:
      break;
    default:
      return cudaErrorNotSupported;
  }
  *out = n.get();
  g.nodes.push_back(std::move(n));
  return cudaSuccess;
}

int32_t HostGraphs::graph_create(uint64_t* graph) {
  std::lock_guard lock(mutex_);
  auto g = std::make_unique<HostGraph>();
  *graph = handle(g.get());
  graphs_[g.get()] = std::move(g);
  return cudaSuccess;
}

int32_t HostGraphs::graph_destroy(uint64_t graph) {
  std::lock_guard lock(mutex_);
  return graphs_.erase(as<HostGraph>(graph)) ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t HostGraphs::graph_clone(uint64_t* out, uint64_t graph) {
  std::lock_guard lock(mutex_);
  auto c = clone(*as<HostGraph>(graph));
  *out = handle(c.get());
  graphs_[c.get()] = std::move(c);
  return cudaSuccess;
}

int32_t HostGraphs::add_node(uint64_t* node, uint64_t graph, std::span<const uint64_t> deps,
                             const GraphNodeParams& p) {
  std::lock_guard lock(mutex_);
  std::vector<HostNode*> d;
  for (uint64_t h : deps) {
    if (std::find(d.begin(), d.end(), as<HostNode>(h)) != d.end()) return cudaErrorInvalidValue;
    d.push_back(as<HostNode>(h));
  }
  HostNode* n;
  if (int32_t e = add(&n, *as<HostGraph>(graph), std::move(d), p)) return e;
  *node = handle(n);
  return cudaSuccess;
}

int32_t HostGraphs::node_params(uint64_t node, GraphNodeParams* p) {
  std::lock_guard lock(mutex_);
  *p = as<HostNode>(node)->p;
  return cudaSuccess;
}

// Memory and conditional nodes keep the parameters they were made with, as CUDA's.
static bool fixed(int32_t type) {
  return type == cudaGraphNodeTypeMemAlloc || type == cudaGraphNodeTypeMemFree ||
         type == cudaGraphNodeTypeConditional;
}

int32_t HostGraphs::set_node_params(uint64_t node, const GraphNodeParams& p) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  if (n->p.type != p.type || fixed(p.type)) return cudaErrorInvalidValue;
  if (p.type == cudaGraphNodeTypeGraph) {
    n->child = clone(*as<HostGraph>(p.handle));
    n->p.handle = handle(n->child.get());
    return cudaSuccess;
  }
  n->p = p;
  return cudaSuccess;
}

int32_t HostGraphs::node_type(uint64_t node, int32_t* type) {
  std::lock_guard lock(mutex_);
  *type = as<HostNode>(node)->p.type;
  return cudaSuccess;
}

int32_t HostGraphs::destroy_node(uint64_t node) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  auto& nodes = n->graph->nodes;
  for (auto& m : nodes) std::erase(m->deps, n);
  std::erase_if(nodes, [&](const auto& m) { return m.get() == n; });
  return cudaSuccess;
}

int32_t HostGraphs::nodes(uint64_t graph, std::vector<uint64_t>* out) {
  std::lock_guard lock(mutex_);
  for (const auto& n : as<HostGraph>(graph)->nodes) out->push_back(handle(n.get()));
  return cudaSuccess;
}

int32_t HostGraphs::root_nodes(uint64_t graph, std::vector<uint64_t>* out) {
  std::lock_guard lock(mutex_);
  for (const auto& n : as<HostGraph>(graph)->nodes)
    if (n->deps.empty()) out->push_back(handle(n.get()));
  return cudaSuccess;
}

int32_t HostGraphs::edges(uint64_t graph, std::vector<uint64_t>* from, std::vector<uint64_t>* to) {
  std::lock_guard lock(mutex_);
  for (const auto& n : as<HostGraph>(graph)->nodes)
    for (const HostNode* d : n->deps) {
      from->push_back(handle(d));
      to->push_back(handle(n.get()));
    }
  return cudaSuccess;
}

int32_t HostGraphs::dependencies(uint64_t node, std::vector<uint64_t>* out) {
  std::lock_guard lock(mutex_);
  for (const HostNode* d : as<HostNode>(node)->deps) out->push_back(handle(d));
  return cudaSuccess;
}

int32_t HostGraphs::dependents(uint64_t node, std::vector<uint64_t>* out) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  for (const auto& m : n->graph->nodes)
    if (std::find(m->deps.begin(), m->deps.end(), n) != m->deps.end()) out->push_back(handle(m.get()));
  return cudaSuccess;
}

int32_t HostGraphs::add_dependencies(uint64_t graph, std::span<const uint64_t> from, std::span<const uint64_t> to) {
  std::lock_guard lock(mutex_);
  HostGraph* g = as<HostGraph>(graph);
  for (size_t i = 0; i < from.size(); ++i) {
    HostNode *f = as<HostNode>(from[i]), *t = as<HostNode>(to[i]);
    if (f->graph != g || t->graph != g || f == t) return cudaErrorInvalidValue;
    if (std::find(t->deps.begin(), t->deps.end(), f) != t->deps.end()) return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < from.size(); ++i) as<HostNode>(to[i])->deps.push_back(as<HostNode>(from[i]));
  return cudaSuccess;
}

int32_t HostGraphs::remove_dependencies(uint64_t graph, std::span<const uint64_t> from,
                                        std::span<const uint64_t> to) {
  std::lock_guard lock(mutex_);
  HostGraph* g = as<HostGraph>(graph);
  for (size_t i = 0; i < from.size(); ++i) {
    HostNode *f = as<HostNode>(from[i]), *t = as<HostNode>(to[i]);
    if (f->graph != g || t->graph != g || std::find(t->deps.begin(), t->deps.end(), f) == t->deps.end())
      return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < from.size(); ++i) std::erase(as<HostNode>(to[i])->deps, as<HostNode>(from[i]));
  return cudaSuccess;
}

int32_t HostGraphs::find_in_clone(uint64_t* out, uint64_t node, uint64_t clone_graph) {
  std::lock_guard lock(mutex_);
  for (const auto& n : as<HostGraph>(clone_graph)->nodes)
    if (n->origin == as<HostNode>(node)) {
      *out = handle(n.get());
      return cudaSuccess;
    }
  return cudaErrorInvalidValue;
}

int32_t HostGraphs::child_graph(uint64_t node, uint64_t* graph) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  if (!n->child) return cudaErrorInvalidValue;
  *graph = handle(n->child.get());
  return cudaSuccess;
}

int32_t HostGraphs::conditional_handle_create(uint64_t* out, uint64_t graph, uint32_t default_value,
                                              uint32_t flags) {
  std::lock_guard lock(mutex_);
  if (flags & ~static_cast<uint32_t>(cudaGraphCondAssignDefault)) return cudaErrorInvalidValue;
  auto c = std::make_shared<HostConditional>(
      HostConditional{default_value, default_value, (flags & cudaGraphCondAssignDefault) != 0});
  *out = handle(c.get());
  as<HostGraph>(graph)->conditionals.push_back(std::move(c));
  return cudaSuccess;
}

int32_t HostGraphs::instantiate(uint64_t* exec, uint64_t graph, uint64_t flags) {
  std::lock_guard lock(mutex_);
  std::vector<const HostNode*> order;
  if (!topological(*as<HostGraph>(graph), &order)) return cudaErrorInvalidValue;
  auto x = std::make_unique<Exec>(Exec{clone(*as<HostGraph>(graph)), flags});
  *exec = handle(x.get());
  execs_[x.get()] = std::move(x);
  return cudaSuccess;
}

int32_t HostGraphs::exec_destroy(uint64_t exec) {
  std::lock_guard lock(mutex_);
  execs_.erase(as<Exec>(exec));
  return cudaSuccess;
}

int32_t HostGraphs::exec_flags(uint64_t exec, uint64_t* flags) {
  std::lock_guard lock(mutex_);
  *flags = as<Exec>(exec)->flags;
  return cudaSuccess;
}

int32_t HostGraphs::launch_graph(uint64_t exec, uint64_t stream) {
  std::lock_guard lock(mutex_);
  const HostGraph& g = *as<Exec>(exec)->graph;
  if (captures_.count(stream)) {
    // Launched into a capture: the whole graph becomes a child graph node.
    GraphNodeParams p;
    p.type = cudaGraphNodeTypeGraph;
    p.handle = handle(&g);
    return record(stream, p);
  }
  assign_defaults(g);
  return run(g, stream);
}

int32_t HostGraphs::upload(uint64_t, uint64_t) { return cudaSuccess; }

int32_t HostGraphs::run(const HostGraph& g, uint64_t stream) {
  std::vector<const HostNode*> order;
  if (!topological(g, &order)) return cudaErrorInvalidValue;
  for (const HostNode* n : order)
    if (n->enabled)
      if (int32_t e = run_node(*n, stream)) return e;
  return cudaSuccess;
}

int32_t HostGraphs::run_node(const HostNode& n, uint64_t stream) {
  const GraphNodeParams& p = n.p;
  switch (p.type) {
    case cudaGraphNodeTypeKernel:
      return hooks_.check_launch(p.function, LaunchConfig{p.grid, p.block, p.shared_mem, stream, false, {}});
    case cudaGraphNodeTypeMemcpy: {
      // The memory may have been freed since the node was made.
      auto live = [&](uint64_t ptr, size_t span, uint8_t host) {
        return p.host_sides & host ? hooks_.host_live(ptr, span) : hooks_.live(ptr, span);
      };
      if (proto::copies_array(p)) {
        auto memory_live = [&](uint64_t array, uint64_t ptr, uint64_t pitch, uint64_t slice, uint8_t host) {
          uint64_t span;
          return array || (proto::copy_span(pitch, slice, p, &span) && live(ptr, span, host));
        };
        if (!memory_live(p.dst_array, p.dst, p.dst_pitch, p.dst_slice, proto::kHostDst) ||
            !memory_live(p.src_array, p.src, p.src_pitch, p.src_slice, proto::kHostSrc))
          return cudaErrorIllegalAddress;
        return hooks_.array_copy(p);
      }
      uint64_t dspan, sspan;
      if (!proto::copy_span(p.dst_pitch, p.dst_slice, p, &dspan) || !proto::copy_span(p.src_pitch, p.src_slice, p, &sspan))
        return cudaErrorInvalidPitchValue;
      if (dspan == 0) return cudaSuccess;
      if (!live(p.dst, dspan, proto::kHostDst) || !live(p.src, sspan, proto::kHostSrc)) return cudaErrorIllegalAddress;
      for (uint64_t r = 0; r < proto::copy_rows(p); ++r)
        std::memmove(as<char>(p.dst + proto::copy_row_offset(r, p.dst_pitch, p.dst_slice, p)),
                     as<char>(p.src + proto::copy_row_offset(r, p.src_pitch, p.src_slice, p)), p.width);
      return cudaSuccess;
    }
    case cudaGraphNodeTypeMemset: {
      if (p.height == 0 || p.width == 0) return cudaSuccess;
      if (!hooks_.live(p.dst, (p.height - 1) * p.dst_pitch + p.width * p.element_size))
        return cudaErrorIllegalAddress;
      for (size_t r = 0; r < p.height; ++r)
        for (size_t x = 0; x < p.width; ++x)
          std::memcpy(as<char>(p.dst + r * p.dst_pitch + x * p.element_size), &p.value, p.element_size);
      return cudaSuccess;
    }
    case cudaGraphNodeTypeMemAlloc:
      return hooks_.live(p.dst, p.width) ? cudaSuccess : hooks_.allocate_at(p.dst, p.width);
    case cudaGraphNodeTypeGraph:
      return run(*n.child, stream);
    case cudaGraphNodeTypeConditional:
      return run_conditional(n, stream);
    case cudaGraphNodeTypeEventRecord:
      hooks_.record_event(p.handle);
      return cudaSuccess;
    case cudaGraphNodeTypeHost:
      if (host_node_runner_) {
        // The host function runs in the client; CUDA holds no lock of the
        // caller's while a host function runs either, but work on the device
        // waits for it (host_node_fence.hpp). launch_graph holds the lock once.
        mutex_.unlock();
        hooks_.host_node_running(true);
        host_node_runner_(p.handle);
        hooks_.host_node_running(false);
        mutex_.lock();
      }
      return cudaSuccess;
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
      return hooks_.run_semaphores(p.type, p.semaphores);
    case proto::kGraphNodeTypeBatchMemOp: {
      std::vector<StreamMemOp> ops;
      for (const auto& w : proto::node_mem_ops(p)) {
        // The memory may have been freed since the node was made.
        if (w.address && !hooks_.live(w.address, proto::mem_op_width(w.type))) return cudaErrorIllegalAddress;
        ops.push_back({w.type, w.flags, w.address, w.value});
      }
      return hooks_.mem_ops(ops, p.value);
    }
    default:  // empty, event wait (work runs at once here), memory nodes (see host_graphs.hpp)
      return cudaSuccess;
  }
}

int32_t HostGraphs::run_conditional(const HostNode& n, uint64_t stream) {
  uint32_t value = as<HostConditional>(n.p.handle)->value;
  switch (n.p.value) {
    case cudaGraphCondTypeIf:
      if (value) return run(*n.bodies[0], stream);
      return n.bodies.size() == 2 ? run(*n.bodies[1], stream) : cudaSuccess;
    case cudaGraphCondTypeWhile:
      if (!value) return cudaSuccess;
      // Only a kernel could end the loop, and kernels do not run here.
      RGPU_LOG(warn, "host-test: a WHILE conditional node entered with a non-zero value never ends here "
                     "(kernels, which would set its condition, do not run)");
      return cudaErrorNotSupported;
    default:  // switch
      return value < n.bodies.size() ? run(*n.bodies[value], stream) : cudaSuccess;
  }
}

// Conditional bodies and child graphs are searched too: the driver lets an
// executable graph update the nodes of bodies and of moved child graphs (the
// worker refuses nodes of cloned ones, whose nodes are copies).
HostNode* HostGraphs::copy_in(HostGraph& exec_graph, uint64_t node) {
  for (const auto& n : exec_graph.nodes) {
    if (n->origin == as<HostNode>(node)) return n.get();
    for (const auto& body : n->bodies)
      if (HostNode* found = copy_in(*body, node)) return found;
    if (n->child)
      if (HostNode* found = copy_in(*n->child, node)) return found;
  }
  return nullptr;
}

int32_t HostGraphs::exec_update(uint64_t exec, uint64_t graph, int32_t* result, uint64_t* error_node) {
  std::lock_guard lock(mutex_);
  HostGraph& x = *as<Exec>(exec)->graph;
  const HostGraph& g = *as<HostGraph>(graph);
  *error_node = 0;
  if (!same_shape(x, g)) {
    *result = cudaGraphExecUpdateErrorTopologyChanged;
    return cudaErrorGraphExecUpdateFailure;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNodeParams &now = x.nodes[i]->p, &then = g.nodes[i]->p;
    *result = now.type != then.type ? cudaGraphExecUpdateErrorNodeTypeChanged
              : now.type == cudaGraphNodeTypeMemcpy && !same_memory_types(now, then)
                  ? cudaGraphExecUpdateErrorParametersChanged
                  : cudaGraphExecUpdateSuccess;
    if (*result != cudaGraphExecUpdateSuccess) {
      *error_node = handle(g.nodes[i].get());
      return cudaErrorGraphExecUpdateFailure;
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) copy_params(*x.nodes[i], *g.nodes[i]);
  // Handles made since the instantiation reach the executable graph too.
  x.conditionals = g.conditionals;
  *result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
}

int32_t HostGraphs::exec_set_params(uint64_t exec, uint64_t node, const GraphNodeParams& p) {
  std::lock_guard lock(mutex_);
  HostNode* n = copy_in(*as<Exec>(exec)->graph, node);
  if (!n || n->p.type != p.type || fixed(p.type)) return cudaErrorInvalidValue;
  if (p.type == cudaGraphNodeTypeGraph) {
    if (!same_shape(*n->child, *as<HostGraph>(p.handle))) return cudaErrorInvalidValue;
    n->child = clone(*as<HostGraph>(p.handle));
    n->p.handle = handle(n->child.get());
    return cudaSuccess;
  }
  // CUDA's executable copy nodes take new 1-D memory operands only; an
  // array operand, before or after, is refused (cudaGraphExecMemcpyNodeSetParams).
  if (p.type == cudaGraphNodeTypeMemcpy && (proto::copies_array(n->p) || proto::copies_array(p)))
    return cudaErrorInvalidValue;
  // The driver lets an executable graph's batch take new addresses and
  // values only, not another count or kind of operation.
  if (p.type == proto::kGraphNodeTypeBatchMemOp) {
    auto before = proto::node_mem_ops(n->p), after = proto::node_mem_ops(p);
    if (before.size() != after.size()) return cudaErrorInvalidValue;
    for (size_t i = 0; i < after.size(); ++i)
      if (before[i].type != after[i].type) return cudaErrorInvalidValue;
  }
  n->p = p;
  return cudaSuccess;
}

int32_t HostGraphs::set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) {
  std::lock_guard lock(mutex_);
  HostNode* n = copy_in(*as<Exec>(exec)->graph, node);
  if (!n || !can_disable(*n)) return cudaErrorInvalidValue;
  n->enabled = enabled != 0;
  return cudaSuccess;
}

int32_t HostGraphs::get_enabled(uint64_t exec, uint64_t node, uint32_t* enabled) {
  std::lock_guard lock(mutex_);
  HostNode* n = copy_in(*as<Exec>(exec)->graph, node);
  if (!n || !can_disable(*n)) return cudaErrorInvalidValue;
  *enabled = n->enabled;
  return cudaSuccess;
}

int32_t HostGraphs::dot_print(uint64_t graph, uint32_t, std::string* dot) {
  std::lock_guard lock(mutex_);
  const HostGraph& g = *as<HostGraph>(graph);
  std::unordered_map<const HostNode*, size_t> index;
  std::ostringstream o;
  o << "digraph dot {\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    index[g.nodes[i].get()] = i;
    o << "  node" << i << " [label=\"" << type_name(g.nodes[i]->p.type) << "\"];\n";
  }
  for (const auto& n : g.nodes)
    for (const HostNode* d : n->deps) o << "  node" << index[d] << " -> node" << index[n.get()] << ";\n";
  o << "}\n";
  *dot = o.str();
  return cudaSuccess;
}

int32_t HostGraphs::begin_capture(uint64_t stream, int32_t mode) {
  std::lock_guard lock(mutex_);
  auto g = std::make_unique<HostGraph>();
  if (int32_t e = start(stream, g.get(), {}, mode, true)) return e;
  graphs_[g.get()] = std::move(g);
  return cudaSuccess;
}

int32_t HostGraphs::begin_capture_to_graph(uint64_t stream, uint64_t graph, std::span<const uint64_t> deps,
                                           int32_t mode) {
  std::lock_guard lock(mutex_);
  for (uint64_t d : deps)
    if (as<HostNode>(d)->graph != as<HostGraph>(graph)) return cudaErrorInvalidValue;
  return start(stream, as<HostGraph>(graph), deps, mode, false);
}

int32_t HostGraphs::start(uint64_t stream, HostGraph* graph, std::span<const uint64_t> deps, int32_t mode,
                          bool owns) {
  if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
  // The legacy default stream cannot capture.
  if (stream == 0 || stream == 1) return cudaErrorStreamCaptureUnsupported;
  if (captures_.count(stream)) return cudaErrorIllegalState;
  StreamCapture sc{std::make_shared<Capture>(Capture{graph, next_capture_id_++, stream, owns}), {}};
  for (uint64_t d : deps) sc.deps.push_back(as<HostNode>(d));
  captures_[stream] = std::move(sc);
  return cudaSuccess;
}

int32_t HostGraphs::end_capture(uint64_t stream, uint64_t* graph) {
  std::lock_guard lock(mutex_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return cudaErrorIllegalState;
  std::shared_ptr<Capture> c = it->second.capture;
  if (c->origin != stream) return cudaErrorStreamCaptureUnmatched;
  c->ended = true;
  std::erase_if(captures_, [&](const auto& kv) { return kv.second.capture == c; });
  if (c->invalidated) {
    if (c->owns_graph) graphs_.erase(c->graph);
    *graph = 0;
    return cudaErrorStreamCaptureInvalidated;
  }
  *graph = handle(c->graph);
  return cudaSuccess;
}

int32_t HostGraphs::capture_info(uint64_t stream, CaptureInfo* info) {
  std::lock_guard lock(mutex_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) {
    info->status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  const Capture& c = *it->second.capture;
  info->status = c.invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  info->id = c.id;
  info->graph = handle(c.graph);
  for (const HostNode* d : it->second.deps) info->dependencies.push_back(handle(d));
  return cudaSuccess;
}

int32_t HostGraphs::update_capture_dependencies(uint64_t stream, std::span<const uint64_t> deps, uint32_t flags) {
  std::lock_guard lock(mutex_);
  auto it = captures_.find(stream);
  if (it == captures_.end()) return cudaErrorIllegalState;
  if (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies)
    return cudaErrorInvalidValue;
  for (uint64_t d : deps)
    if (as<HostNode>(d)->graph != it->second.capture->graph) return cudaErrorInvalidValue;
  if (flags == cudaStreamSetCaptureDependencies) it->second.deps.clear();
  for (uint64_t d : deps)
    if (std::find(it->second.deps.begin(), it->second.deps.end(), as<HostNode>(d)) == it->second.deps.end())
      it->second.deps.push_back(as<HostNode>(d));
  return cudaSuccess;
}

int32_t HostGraphs::capture_host_node(uint64_t stream, uint64_t host_record) {
  GraphNodeParams p;
  p.type = cudaGraphNodeTypeHost;
  p.handle = host_record;
  return record(stream, p);
}

int32_t HostGraphs::exchange_capture_mode(int32_t* mode) {
  if (*mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
  std::swap(*mode, t_capture_mode);
  return cudaSuccess;
}

int32_t HostGraphs::kernel_node_get_attribute(uint64_t node, int32_t attr, cudaLaunchAttributeValue* value) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  if (n->p.type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
  auto it = n->attributes.find(attr);
  *value = it == n->attributes.end() ? cudaLaunchAttributeValue{} : it->second;
  return cudaSuccess;
}

int32_t HostGraphs::kernel_node_set_attribute(uint64_t node, int32_t attr, const cudaLaunchAttributeValue& value) {
  std::lock_guard lock(mutex_);
  HostNode* n = as<HostNode>(node);
  if (n->p.type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
  n->attributes[attr] = value;
  return cudaSuccess;
}

int32_t HostGraphs::kernel_node_copy_attributes(uint64_t dst, uint64_t src) {
  std::lock_guard lock(mutex_);
  HostNode *d = as<HostNode>(dst), *s = as<HostNode>(src);
  if (d->p.type != cudaGraphNodeTypeKernel || s->p.type != cudaGraphNodeTypeKernel) return cudaErrorInvalidValue;
  d->attributes = s->attributes;
  return cudaSuccess;
}

int32_t HostGraphs::user_object_create(uint64_t* object, uint64_t record, uint32_t refs, uint32_t flags) {
  if (flags != cudaUserObjectNoDestructorSync || refs == 0) return cudaErrorInvalidValue;
  *object = handle(new HostUserObject{record, refs, host_node_runner_});
  return cudaSuccess;
}

int32_t HostGraphs::user_object_retain(uint64_t object, uint32_t count) {
  std::lock_guard lock(mutex_);
  if (count == 0) return cudaErrorInvalidValue;
  as<HostUserObject>(object)->refs += count;
  return cudaSuccess;
}

int32_t HostGraphs::user_object_release(uint64_t object, uint32_t count) {
  std::lock_guard lock(mutex_);
  if (count == 0 || count > as<HostUserObject>(object)->refs) return cudaErrorInvalidValue;
  release_user_object(as<HostUserObject>(object), count);
  return cudaSuccess;
}

int32_t HostGraphs::graph_retain_user_object(uint64_t graph, uint64_t object, uint32_t count, uint32_t flags) {
  std::lock_guard lock(mutex_);
  if (count == 0 || (flags & ~cudaGraphUserObjectMove)) return cudaErrorInvalidValue;
  // Moved references were the caller's; others are new.
  if (!(flags & cudaGraphUserObjectMove)) as<HostUserObject>(object)->refs += count;
  as<HostGraph>(graph)->user_refs[as<HostUserObject>(object)] += count;
  return cudaSuccess;
}

int32_t HostGraphs::graph_release_user_object(uint64_t graph, uint64_t object, uint32_t count) {
  std::lock_guard lock(mutex_);
  auto& refs = as<HostGraph>(graph)->user_refs;
  auto it = refs.find(as<HostUserObject>(object));
  if (count == 0 || it == refs.end() || it->second < count) return cudaErrorInvalidValue;
  if ((it->second -= count) == 0) refs.erase(it);
  release_user_object(as<HostUserObject>(object), count);
  return cudaSuccess;
}

// Graphs allocate no memory of their own here.
int32_t HostGraphs::get_graph_mem_attribute(int, int32_t attr, uint64_t* value) {
  if (attr < cudaGraphMemAttrUsedMemCurrent || attr > cudaGraphMemAttrReservedMemHigh) return cudaErrorInvalidValue;
  *value = 0;
  return cudaSuccess;
}

int32_t HostGraphs::set_graph_mem_attribute(int, int32_t attr, uint64_t value) {
  // Only the high watermarks can be set, and only back to zero.
  if (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh) return cudaErrorInvalidValue;
  return value == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace rgpu::server
