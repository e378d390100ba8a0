#include "client/graph/server_calls.hpp"

#include <atomic>
#include <cstdio>
#include <utility>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/host_callback_runner.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "client/core/thread_resident.hpp"
#include "client/graph/handles.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"

namespace rgpu::client {
namespace {


// Nodes must all be of `device`; their server handles are appended to w.
cudaError_t put_nodes(proto::Writer& w, const cudaGraphNode_t* nodes, size_t n, int device) {
  if (n && !nodes) return cudaErrorInvalidValue;
  w.put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) {
    RemoteObject o;
    if (cudaError_t e = find_handle(graph_node_handles(), nodes[i], &o)) return e;
    if (o.device != device) return cudaErrorInvalidValue;
    w.put(o.remote);
  }
  return cudaSuccess;
}

// Only ordinary dependencies travel. A programmatic edge or an outgoing
// port (XLA's command buffers on Hopper make them) lets the dependent node
// start earlier than its dependency's end: run as an ordinary dependency it
// waits for the whole node, which is correct, only without that overlap.
// Incoming ports do not exist.
cudaError_t plain_edges(const cudaGraphEdgeData* edges, size_t n) {
  if (!edges) return cudaSuccess;
  static std::atomic<bool> told{false};
  for (size_t i = 0; i < n; ++i) {
    if (edges[i].to_port) return cudaErrorInvalidValue;
    if ((edges[i].from_port || edges[i].type != cudaGraphDependencyTypeDefault) && !told.exchange(true))
      RGPU_LOG(info, "graph edges with programmatic dependencies or ports run as ordinary dependencies");
  }
  return cudaSuccess;
}

std::vector<cudaGraphNode_t> get_nodes(proto::Reader& r, int device) {
  auto n = r.get<uint32_t>();
  if (n > r.remaining() / sizeof(uint64_t)) throw proto::DecodeError("more nodes than the reply holds");
  std::vector<cudaGraphNode_t> out(n);
  for (auto& h : out) h = graph_node_handles().intern(device, r.get<uint64_t>());
  return out;
}

// CUDA's two-step listing: count only, or fill up to *n and say how many
// there are (filling unused slots with null).
template <typename T>
void list_out(const std::vector<T>& items, T* out, size_t* n) {
  if (out)
    for (size_t i = 0; i < *n; ++i) out[i] = i < items.size() ? items[i] : T{};
  *n = items.size();
}

void zero_edges(cudaGraphEdgeData* edges, size_t n) {
  if (edges)
    for (size_t i = 0; i < n; ++i) edges[i] = cudaGraphEdgeData{};
}

// A call on the device of an object of `table`, its server handle first.
template <typename H>
cudaError_t on_object(HandleRegistry<H>& table, H h, Call& call, RemoteObject* o) {
  if (cudaError_t e = find_handle(table, h, o)) return e;
  int32_t remote;
  if (cudaError_t e = call.to_device(o->device, &remote)) return e;
  call.args().put(o->remote);
  return cudaSuccess;
}

// An executable graph's call on one of its graph's nodes.
cudaError_t on_exec_node(cudaGraphExec_t exec, cudaGraphNode_t node, Call& call) {
  RemoteObject x, n;
  if (cudaError_t e = on_object(graph_exec_handles(), exec, call, &x)) return e;
  if (cudaError_t e = find_handle(graph_node_handles(), node, &n)) return e;
  if (n.device != x.device) return cudaErrorInvalidValue;
  call.args().put(n.remote);
  return cudaSuccess;
}

// A stream's call; the stream decides the device.
cudaError_t on_stream(cudaStream_t stream, Call& call) {
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  call.args().put(s);
  return cudaSuccess;
}

// Captures begun and not yet ended in this process: copies look for a
// capture only while one may be going on.
std::atomic<int> g_captures{0};
void captures_changed(int by) {
  if (by > 0 || g_captures > 0) g_captures += by;
}

ThreadResident<std::vector<cudaGraphNode_t>> t_capture_deps;
ThreadResident<std::vector<cudaGraphEdgeData>> t_capture_edges;

}  // namespace


cudaError_t graph_create(cudaGraph_t* graph, unsigned flags) {
  return graph_create_on(Runtime::current_device(), graph, flags);
}

cudaError_t graph_create_on(int device, cudaGraph_t* graph, unsigned flags) {
  if (!graph) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphCreate);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  call.args().put<uint32_t>(flags);
  if (cudaError_t e = call.run()) return e;
  *graph = graph_handles().intern(call.device_index(), call.reply().get<uint64_t>());
  return cudaSuccess;
}

cudaError_t graph_destroy(cudaGraph_t graph) {
  Call call(proto::kOpGraphDestroy);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  cudaError_t e = call.run();
  if (e == cudaSuccess) {
    MemoryMap::get().graph_destroyed(reinterpret_cast<uint64_t>(graph));
    graph_handles().remove(graph);
  }
  return e;
}

cudaError_t graph_clone(cudaGraph_t* clone, cudaGraph_t graph) {
  if (!clone) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphClone);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  if (cudaError_t e = call.run()) return e;
  *clone = graph_handles().intern(o.device, call.reply().get<uint64_t>());
  return cudaSuccess;
}

cudaError_t server_add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                            const cudaGraphEdgeData* edges, const GraphNodeParams& p, AddedNode* added) {
  if (!node) return cudaErrorInvalidValue;
  if (cudaError_t e = plain_edges(edges, n)) return e;
  Call call(proto::kOpGraphAddNode);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  if (cudaError_t e = put_nodes(call.args(), deps, n, o.device)) return e;
  proto::put_node(call.args(), p);
  if (cudaError_t e = call.run()) return e;
  *node = graph_node_handles().intern(o.device, call.reply().get<uint64_t>());
  // The graph's memory is the device's from the node on: once the graph ran,
  // copies, memsets and kernels may use it and cudaFree may free it, unless
  // the graph frees it itself (see MemoryMap).
  if (p.type == cudaGraphNodeTypeMemAlloc) {
    auto address = call.reply().get<uint64_t>();
    if (!MemoryMap::get().add_graph_memory(address, p.width, o.device, reinterpret_cast<uint64_t>(graph))) {
      RGPU_LOG(error, "device %d's graph allocation at 0x%lx overlaps another server's GPU memory: pointers to it "
                      "could not say which GPU they name; refusing it",
               o.device, static_cast<unsigned long>(address));
      return cudaErrorMemoryAllocation;
    }
    if (added) added->allocated = reinterpret_cast<void*>(address);
  }
  if (p.type == cudaGraphNodeTypeMemFree) MemoryMap::get().graph_frees(p.dst, reinterpret_cast<uint64_t>(graph));
  if (p.type == cudaGraphNodeTypeConditional) {
    auto n = call.reply().get<uint32_t>();
    if (n > call.reply().remaining() / sizeof(uint64_t)) throw proto::DecodeError("more bodies than the reply holds");
    std::vector<cudaGraph_t> bodies(n);
    for (auto& b : bodies) b = graph_handles().intern(o.device, call.reply().get<uint64_t>());
    if (added) added->bodies = std::move(bodies);
  }
  return cudaSuccess;
}

cudaError_t graph_conditional_handle_create(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                            unsigned default_value, unsigned flags) {
  if (!handle) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphConditionalHandleCreate);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  call.args().put<uint32_t>(default_value).put<uint32_t>(flags);
  if (cudaError_t e = call.run()) return e;
  *handle = call.reply().get<uint64_t>();
  return cudaSuccess;
}

cudaError_t server_node_params(cudaGraphNode_t node, GraphNodeParams* p) {
  Call call(proto::kOpGraphNodeGetParams);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  if (cudaError_t e = call.run()) return e;
  *p = proto::get_node(call.reply());
  return cudaSuccess;
}



cudaError_t server_set_params(cudaGraphNode_t node, const GraphNodeParams& p) {
  Call call(proto::kOpGraphNodeSetParams);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  proto::put_node(call.args(), p);
  return call.run();
}

cudaError_t server_node_type(cudaGraphNode_t node, cudaGraphNodeType* type) {
  if (!type) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphNodeGetType);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  auto number = call.reply().get<int32_t>();
  *type = static_cast<cudaGraphNodeType>(number);
  return cudaSuccess;
}

cudaError_t graph_destroy_node(cudaGraphNode_t node) {
  Call call(proto::kOpGraphDestroyNode);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  cudaError_t e = call.run();
  if (e == cudaSuccess) graph_node_handles().remove(node);
  return e;
}

cudaError_t graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* n, bool roots_only) {
  if (!n) return cudaErrorInvalidValue;
  Call call(roots_only ? proto::kOpGraphGetRootNodes : proto::kOpGraphGetNodes);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  list_out(get_nodes(call.reply(), o.device), nodes, n);
  return cudaSuccess;
}

cudaError_t graph_get_edges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                            cudaGraphEdgeData* edges, size_t* n) {
  if (!n || static_cast<bool>(from) != static_cast<bool>(to)) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphGetEdges);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  auto f = get_nodes(call.reply(), o.device);
  auto t = get_nodes(call.reply(), o.device);
  size_t room = *n;
  list_out(f, from, n);
  list_out(t, to, &room);
  if (from) zero_edges(edges, room < *n ? room : *n);
  return cudaSuccess;
}

cudaError_t node_neighbours(cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* n,
                            bool dependents) {
  if (!n) return cudaErrorInvalidValue;
  Call call(dependents ? proto::kOpGraphNodeGetDependentNodes : proto::kOpGraphNodeGetDependencies);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  size_t room = *n;
  list_out(get_nodes(call.reply(), o.device), out, n);
  if (out) zero_edges(edges, room < *n ? room : *n);
  return cudaSuccess;
}

cudaError_t graph_change_dependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                      const cudaGraphEdgeData* edges, size_t n, bool add) {
  if (cudaError_t e = plain_edges(edges, n)) return e;
  Call call(add ? proto::kOpGraphAddDependencies : proto::kOpGraphRemoveDependencies);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  if (cudaError_t e = put_nodes(call.args(), from, n, o.device)) return e;
  if (cudaError_t e = put_nodes(call.args(), to, n, o.device)) return e;
  return call.run();
}

cudaError_t node_find_in_clone(cudaGraphNode_t* out, cudaGraphNode_t node, cudaGraph_t clone) {
  if (!out) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphNodeFindInClone);
  RemoteObject n, g;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &n)) return e;
  if (cudaError_t e = find_handle(graph_handles(), clone, &g)) return e;
  if (g.device != n.device) return cudaErrorInvalidValue;
  call.args().put(g.remote);
  if (cudaError_t e = call.quiet().run()) return e;
  *out = graph_node_handles().intern(n.device, call.reply().get<uint64_t>());
  return cudaSuccess;
}

cudaError_t child_graph_node_get_graph(cudaGraphNode_t node, cudaGraph_t* graph) {
  if (!graph) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphChildGraphNodeGetGraph);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  *graph = graph_handles().intern(o.device, call.reply().get<uint64_t>());
  return cudaSuccess;
}

cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  if (!exec) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphInstantiate);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  call.args().put<uint64_t>(flags);
  if (cudaError_t e = call.run()) return e;
  *exec = graph_exec_handles().intern(o.device, call.reply().get<uint64_t>());
  MemoryMap::get().graph_instantiated(reinterpret_cast<uint64_t>(graph), reinterpret_cast<uint64_t>(*exec));
  return cudaSuccess;
}

cudaError_t graph_instantiate_with_params(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags,
                                          cudaStream_t upload_stream) {
  // The upload is done here, on upload_stream: instantiating takes no such flag.
  cudaError_t e = graph_instantiate(exec, graph, flags & ~cudaGraphInstantiateFlagUpload);
  if (e == cudaSuccess && (flags & cudaGraphInstantiateFlagUpload)) e = graph_upload(*exec, upload_stream);
  return e;
}

cudaError_t graph_exec_destroy(cudaGraphExec_t exec) {
  Call call(proto::kOpGraphExecDestroy);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_exec_handles(), exec, call, &o)) return e;
  cudaError_t e = call.run();
  if (e == cudaSuccess) {
    MemoryMap::get().exec_destroyed(reinterpret_cast<uint64_t>(exec));
    graph_exec_handles().remove(exec);
  }
  return e;
}

namespace {

// Launches and uploads are asynchronous, as kernel launches: errors surface later.
cudaError_t post_on_stream(uint16_t op, cudaGraphExec_t exec, cudaStream_t stream) {
  RemoteObject x;
  if (cudaError_t e = find_handle(graph_exec_handles(), exec, &x)) return e;
  Call call(op);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  if (call.device_index() != x.device) return cudaErrorInvalidValue;
  call.args().put(x.remote).put(s);
  return call.post();
}

}  // namespace

// A launch allocates again what the application freed of the graph's memory.
cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  cudaError_t e = post_on_stream(proto::kOpGraphLaunch, exec, stream);
  if (e == cudaSuccess) MemoryMap::get().graph_launched(reinterpret_cast<uint64_t>(exec));
  return e;
}

cudaError_t graph_upload(cudaGraphExec_t exec, cudaStream_t stream) {
  return post_on_stream(proto::kOpGraphUpload, exec, stream);
}

cudaError_t graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
  if (!info) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphExecUpdate);
  RemoteObject x, g;
  if (cudaError_t e = on_object(graph_exec_handles(), exec, call, &x)) return e;
  if (cudaError_t e = find_handle(graph_handles(), graph, &g)) return e;
  if (g.device != x.device) return cudaErrorInvalidValue;
  call.args().put(g.remote);
  if (cudaError_t e = call.run()) return e;
  auto result = call.reply().get<proto::EnumNumber<cudaGraphExecUpdateResult>>();
  auto node = call.reply().get<uint64_t>();
  *info = cudaGraphExecUpdateResultInfo{};
  // A number from the server, an enum once known (protocol/wire_enum.hpp).
  info->result = proto::enum_in_range(result, cudaGraphExecUpdateSuccess, cudaGraphExecUpdateErrorAttributesChanged)
                     ? static_cast<cudaGraphExecUpdateResult>(result)
                     : cudaGraphExecUpdateError;
  if (node) info->errorNode = graph_node_handles().intern(x.device, node);
  return result == cudaGraphExecUpdateSuccess ? cudaSuccess : cudaErrorGraphExecUpdateFailure;
}

cudaError_t server_exec_set_params(cudaGraphExec_t exec, cudaGraphNode_t node, const GraphNodeParams& p) {
  Call call(proto::kOpGraphExecNodeSetParams);
  if (cudaError_t e = on_exec_node(exec, node, call)) return e;
  proto::put_node(call.args(), p);
  return call.run();
}

cudaError_t graph_node_set_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned enabled) {
  Call call(proto::kOpGraphNodeSetEnabled);
  if (cudaError_t e = on_exec_node(exec, node, call)) return e;
  call.args().put<uint32_t>(enabled);
  return call.run();
}

cudaError_t graph_node_get_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned* enabled) {
  if (!enabled) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphNodeGetEnabled);
  if (cudaError_t e = on_exec_node(exec, node, call)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  *enabled = call.reply().get<uint32_t>();
  return cudaSuccess;
}

cudaError_t graph_exec_get_flags(cudaGraphExec_t exec, unsigned long long* flags) {
  if (!flags) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphExecGetFlags);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_exec_handles(), exec, call, &o)) return e;
  if (cudaError_t e = call.quiet().run()) return e;
  *flags = call.reply().get<uint64_t>();
  return cudaSuccess;
}

cudaError_t graph_debug_dot_print(cudaGraph_t graph, const char* path, unsigned flags) {
  if (!path) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphDebugDotPrint);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &o)) return e;
  call.args().put<uint32_t>(flags);
  if (cudaError_t e = call.quiet().run()) return e;
  std::string dot = call.reply().get_string();
  FILE* f = std::fopen(path, "w");
  if (!f) return cudaErrorOperatingSystem;
  bool ok = std::fwrite(dot.data(), 1, dot.size(), f) == dot.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? cudaSuccess : cudaErrorOperatingSystem;
}

cudaError_t stream_begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  Call call(proto::kOpStreamBeginCapture);
  if (cudaError_t e = on_stream(stream, call)) return e;
  call.args().put<int32_t>(mode);
  cudaError_t e = call.run();
  if (e == cudaSuccess) captures_changed(1);
  return e;
}

cudaError_t stream_begin_capture_to_graph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData* edges, size_t n, cudaStreamCaptureMode mode) {
  if (cudaError_t e = plain_edges(edges, n)) return e;
  RemoteObject g;
  if (cudaError_t e = find_handle(graph_handles(), graph, &g)) return e;
  Call call(proto::kOpStreamBeginCaptureToGraph);
  if (cudaError_t e = on_stream(stream, call)) return e;
  if (call.device_index() != g.device) return cudaErrorInvalidValue;
  call.args().put(g.remote);
  if (cudaError_t e = put_nodes(call.args(), deps, n, g.device)) return e;
  call.args().put<int32_t>(mode);
  cudaError_t e = call.run();
  if (e == cudaSuccess) captures_changed(1);
  return e;
}

cudaError_t stream_end_capture(cudaStream_t stream, cudaGraph_t* graph) {
  Call call(proto::kOpStreamEndCapture);
  if (cudaError_t e = on_stream(stream, call)) return e;
  // Without an output the server drops a new capture's graph.
  call.args().put<uint8_t>(graph != nullptr);
  if (graph) *graph = nullptr;
  cudaError_t e = call.run();
  // An invalidated capture ends too.
  if (e == cudaSuccess || e == cudaErrorStreamCaptureInvalidated) captures_changed(-1);
  if (e) return e;
  auto captured = call.reply().get<uint64_t>();
  if (graph) *graph = graph_handles().intern(call.device_index(), captured);
  return cudaSuccess;
}

cudaError_t stream_get_capture_info(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                    cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                    const cudaGraphEdgeData** edges, size_t* n) {
  if (!status) return cudaErrorInvalidValue;
  Call call(proto::kOpStreamGetCaptureInfo);
  if (cudaError_t e = on_stream(stream, call)) return e;
  // Libraries ask before every launch (CuPy, PyTorch): while this process
  // captures nothing, no stream is capturing, and no round trip is needed.
  int32_t status_number = cudaStreamCaptureStatusNone;
  uint64_t capture_id = 0, remote_graph = 0;
  t_capture_deps->clear();
  if (g_captures > 0) {
    if (cudaError_t e = call.quiet().run()) return e;
    status_number = call.reply().get<int32_t>();
    capture_id = call.reply().get<uint64_t>();
    remote_graph = call.reply().get<uint64_t>();
    t_capture_deps.get() = get_nodes(call.reply(), call.device_index());
  }
  *status = static_cast<cudaStreamCaptureStatus>(status_number);
  t_capture_edges->assign(t_capture_deps->size(), cudaGraphEdgeData{});
  bool active = status_number != cudaStreamCaptureStatusNone;
  if (id) *id = active ? capture_id : 0;
  if (graph) *graph = active && remote_graph ? graph_handles().intern(call.device_index(), remote_graph) : nullptr;
  if (deps) *deps = t_capture_deps->data();
  if (edges) *edges = t_capture_edges->data();
  if (n) *n = t_capture_deps->size();
  return cudaSuccess;
}

cudaError_t stream_update_capture_dependencies(cudaStream_t stream, const cudaGraphNode_t* deps,
                                               const cudaGraphEdgeData* edges, size_t n, unsigned flags) {
  if (cudaError_t e = plain_edges(edges, n)) return e;
  Call call(proto::kOpStreamUpdateCaptureDependencies);
  if (cudaError_t e = on_stream(stream, call)) return e;
  if (cudaError_t e = put_nodes(call.args(), deps, n, call.device_index())) return e;
  call.args().put<uint32_t>(flags);
  return call.run();
}


bool captures_may_be_active() { return g_captures > 0; }

cudaError_t thread_exchange_stream_capture_mode(cudaStreamCaptureMode* mode) {
  if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
    return cudaErrorInvalidValue;
  // The mode is the thread's: the old one is known here, and the thread's
  // worker thread follows with a posted call, so an exchange costs no round
  // trip (PyTorch makes a few every training step).
  thread_local cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
  Call call(proto::kOpThreadExchangeStreamCaptureMode);
  if (cudaError_t e = call.to_current_device()) return e;
  call.args().put<int32_t>(*mode);
  if (cudaError_t e = call.post()) return e;
  std::swap(t_mode, *mode);
  return cudaSuccess;
}

cudaError_t kernel_node_get_attribute(cudaGraphNode_t node, cudaLaunchAttributeID attr,
                                      cudaLaunchAttributeValue* value) {
  if (!value) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphKernelNodeGetAttribute);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  call.args().put<int32_t>(attr);
  if (cudaError_t e = call.quiet().run()) return e;
  *value = call.reply().get<cudaLaunchAttributeValue>();
  return cudaSuccess;
}

cudaError_t kernel_node_set_attribute(cudaGraphNode_t node, cudaLaunchAttributeID attr,
                                      const cudaLaunchAttributeValue* value) {
  if (!value) return cudaErrorInvalidValue;
  Call call(proto::kOpGraphKernelNodeSetAttribute);
  RemoteObject o;
  if (cudaError_t e = on_object(graph_node_handles(), node, call, &o)) return e;
  call.args().put<int32_t>(attr).put(*value);
  return call.run();
}

cudaError_t kernel_node_copy_attributes(cudaGraphNode_t dst, cudaGraphNode_t src) {
  Call call(proto::kOpGraphKernelNodeCopyAttributes);
  RemoteObject d, s;
  if (cudaError_t e = on_object(graph_node_handles(), dst, call, &d)) return e;
  if (cudaError_t e = find_handle(graph_node_handles(), src, &s)) return e;
  if (s.device != d.device) return cudaErrorInvalidValue;
  call.args().put(s.remote);
  return call.run();
}

cudaError_t user_object_create(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy, unsigned refs,
                               unsigned flags) {
  if (!destroy) return cudaErrorInvalidValue;
  return user_object_create_on(Runtime::current_device(), object, [destroy, ptr] { destroy(ptr); }, refs, flags);
}

cudaError_t user_object_create_on(int device, cudaUserObject_t* object, std::function<void()> destroy, unsigned refs,
                                  unsigned flags) {
  if (!object) return cudaErrorInvalidValue;
  Call call(proto::kOpUserObjectCreate);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  HostCallbackRunner& runner = call.device()->session->host_callbacks();
  uint64_t id = runner.add(std::move(destroy), static_cast<uint16_t>(remote), 0);
  if (!id) return cudaErrorNotSupported;  // the server offers no callback connection
  call.args().put(id).put<uint32_t>(refs).put<uint32_t>(flags);
  if (cudaError_t e = call.run()) {
    runner.drop(id);
    return e;
  }
  *object = user_object_handles().intern(call.device_index(), call.reply().get<uint64_t>());
  return cudaSuccess;
}

cudaError_t graph_staging_alloc(int device, size_t bytes, uint64_t* address) {
  Call call(proto::kOpGraphStagingAlloc);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  call.args().put<uint64_t>(bytes);
  if (cudaError_t e = call.quiet().run()) return e;
  *address = call.reply().get<uint64_t>();
  return cudaSuccess;
}

cudaError_t user_object_retain(cudaUserObject_t object, unsigned count, bool retain) {
  Call call(retain ? proto::kOpUserObjectRetain : proto::kOpUserObjectRelease);
  RemoteObject o;
  if (cudaError_t e = on_object(user_object_handles(), object, call, &o)) return e;
  call.args().put<uint32_t>(count);
  return call.run();
}

cudaError_t graph_user_object(cudaGraph_t graph, cudaUserObject_t object, unsigned count, unsigned flags,
                              bool retain) {
  Call call(retain ? proto::kOpGraphRetainUserObject : proto::kOpGraphReleaseUserObject);
  RemoteObject g, o;
  if (cudaError_t e = on_object(graph_handles(), graph, call, &g)) return e;
  if (cudaError_t e = find_handle(user_object_handles(), object, &o)) return e;
  if (o.device != g.device) return cudaErrorInvalidValue;
  call.args().put(o.remote).put<uint32_t>(count);
  if (retain) call.args().put<uint32_t>(flags);
  return call.run();
}

cudaError_t device_graph_mem_attribute(int device, cudaGraphMemAttributeType attr, void* value, bool set) {
  if (!value) return cudaErrorInvalidValue;
  Call call(set ? proto::kOpDeviceSetGraphMemAttribute : proto::kOpDeviceGetGraphMemAttribute);
  int32_t remote;
  if (cudaError_t e = call.to_device(device, &remote)) return e;
  call.args().put<int32_t>(remote).put<int32_t>(attr);
  // Every graph memory attribute is a 64-bit value.
  if (set) {
    call.args().put(*static_cast<const uint64_t*>(value));
    return call.run();
  }
  if (cudaError_t e = call.quiet().run()) return e;
  *static_cast<uint64_t*>(value) = call.reply().get<uint64_t>();
  return cudaSuccess;
}

}  // namespace rgpu::client
