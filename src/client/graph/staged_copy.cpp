#include "client/graph/staged_copy.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "client/core/host_callback_runner.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "client/graph/handles.hpp"
#include "client/graph/node_params.hpp"
#include "client/graph/server_calls.hpp"
#include "client/graph/staging_blocks.hpp"
#include "common/log.hpp"

namespace rgpu::client {
namespace {

// One set of copy parameters and what carries it out.
struct StagedCopy {
  GraphNodeParams app;   // as the application made it (host sides marked host, not pageable)
  GraphNodeParams copy;  // the staging block's side of it: a copy the server can run (empty when local)
  bool upload = false;   // the host node goes first
  // Both sides are this process's memory: the host function copies between
  // them and the node's second step is an empty node.
  bool local = false;
  // The host function's move, none when no side is pageable (a staged node
  // set to device or page-locked memory).
  char* host = nullptr;
  size_t host_pitch = 0, host_slice = 0;
  StagingBlock staging;
  HostCallbackRunner* runner = nullptr;
  uint64_t callback = 0;  // the host function's number
  cudaUserObject_t object = nullptr;  // named only while this thread holds its first reference

  bool remote = false;  // the block is the worker's (tcp, ucx), else shared host memory

  char* row(uint64_t base, uint64_t pitch, uint64_t slice, uint64_t i) const {
    return reinterpret_cast<char*>(base + proto::copy_row_offset(i, pitch, slice, app));
  }

  // The rows packed in the block, or over tcp and ucx in `bytes` (what the
  // worker sent or asked for); a local copy's rows straight across.
  void move(std::span<uint8_t> bytes) const {
    uint64_t rows = proto::copy_rows(app);
    if (local) {
      for (uint64_t r = 0; r < rows; ++r)
        std::memmove(row(app.dst, app.dst_pitch, app.dst_slice, r), row(app.src, app.src_pitch, app.src_slice, r),
                     app.width);
      return;
    }
    if (!host) return;
    char* block = staging.base;
    if (remote) {
      if (bytes.size() != app.width * rows) {
        // A host function has no way to fail the graph.
        RGPU_LOG(error, "a graph's staged copy of pageable host memory got %zu bytes for %llu",
                 bytes.size(), static_cast<unsigned long long>(app.width * rows));
        return;
      }
      block = reinterpret_cast<char*>(bytes.data());
    }
    for (uint64_t r = 0; r < rows; ++r) {
      char* staged = block + r * app.width;
      char* at = row(reinterpret_cast<uint64_t>(host), host_pitch, host_slice, r);
      if (upload)
        std::memcpy(staged, at, app.width);
      else
        std::memcpy(at, staged, app.width);
    }
  }
};

// Staged copies by their host function's number, while their user object lives.
std::mutex g_mutex;
std::map<uint64_t, std::shared_ptr<StagedCopy>>& staged_copies() {
  static auto* m = new std::map<uint64_t, std::shared_ptr<StagedCopy>>;
  return *m;
}

std::shared_ptr<StagedCopy> find_staged(uint64_t callback) {
  std::lock_guard lock(g_mutex);
  auto it = staged_copies().find(callback);
  return it == staged_copies().end() ? nullptr : it->second;
}

// The user object's destructor: runs in this process once no graph holds
// the copy; it only gives back what the copy held (no call to the server).
void forget(int device, uint64_t callback) {
  std::shared_ptr<StagedCopy> c;
  {
    std::lock_guard lock(g_mutex);
    auto it = staged_copies().find(callback);
    if (it == staged_copies().end()) return;
    c = std::move(it->second);
    staged_copies().erase(it);
  }
  c->runner->drop(c->callback);
  graph_staging(device).give_back(c->staging);
}

// A staged copy of `p`, registered, with a user object holding its one reference.
cudaError_t make_staged(int device, const GraphNodeParams& p, std::shared_ptr<StagedCopy>* out) {
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return cudaErrorInvalidDevice;
  auto c = std::make_shared<StagedCopy>();
  c->app = p;
  c->app.host_sides &= ~(proto::kPageableDst | proto::kPageableSrc);
  c->copy = c->app;
  c->upload = p.host_sides & proto::kPageableSrc;
  c->remote = !dev->session->shares_memory();
  c->local = (p.host_sides & proto::kPageableDst) && (p.host_sides & proto::kPageableSrc);
  if (c->local) {
    c->copy = GraphNodeParams{};  // an empty node after the host node
  } else if (p.host_sides & (proto::kPageableDst | proto::kPageableSrc)) {
    size_t bytes;
    if (__builtin_mul_overflow(p.width, proto::copy_rows(p), &bytes)) return cudaErrorInvalidValue;
    c->staging = graph_staging(device).take(bytes);
    if (!c->staging.base) return cudaErrorMemoryAllocation;
    // The host side (the source of an upload) becomes the staging block,
    // which holds the rows packed, slice after slice.
    uint64_t& at = c->upload ? c->copy.src : c->copy.dst;
    uint64_t& pitch = c->upload ? c->copy.src_pitch : c->copy.dst_pitch;
    uint64_t& slice = c->upload ? c->copy.src_slice : c->copy.dst_slice;
    c->host = reinterpret_cast<char*>(at);
    c->host_pitch = pitch;
    c->host_slice = slice;
    at = reinterpret_cast<uint64_t>(c->staging.base);
    pitch = p.width;
    slice = p.height;
    const uint8_t host = c->upload ? proto::kHostSrc : proto::kHostDst;
    const uint8_t staging = c->upload ? proto::kStagingSrc : proto::kStagingDst;
    if (c->remote) c->copy.host_sides = (c->copy.host_sides & ~host) | staging;
  }
  c->runner = &dev->session->host_callbacks();
  c->callback = c->runner->add_staged([c](std::span<uint8_t> bytes) { c->move(bytes); },
                                     static_cast<uint16_t>(dev->remote));
  if (!c->callback) {
    graph_staging(device).give_back(c->staging);
    return cudaErrorNotSupported;  // the server offers no callback connection
  }
  {
    std::lock_guard lock(g_mutex);
    staged_copies()[c->callback] = c;
  }
  uint64_t callback = c->callback;
  if (cudaError_t e = user_object_create_on(device, &c->object, [device, callback] { forget(device, callback); }, 1,
                                            cudaUserObjectNoDestructorSync)) {
    forget(device, callback);
    return e;
  }
  *out = std::move(c);
  return cudaSuccess;
}

// Drops the reference make_staged gave this thread (once a graph holds one).
void release(const StagedCopy& c) { user_object_retain(c.object, 1, false); }

GraphNodeParams host_step(const StagedCopy& c) {
  GraphNodeParams h;
  h.type = cudaGraphNodeTypeHost;
  h.handle = c.callback;
  if (c.remote && c.host) {
    // The worker's block the host node fills from this process or sends here.
    h.dst = reinterpret_cast<uint64_t>(c.staging.base);
    h.width = c.app.width * proto::copy_rows(c.app);
    h.host_sides = c.upload ? proto::kStagingDst : proto::kStagingSrc;
  }
  return h;
}

// A graph of the copy's two nodes, in order.
cudaError_t make_body(int device, const StagedCopy& c, cudaGraph_t* body) {
  if (cudaError_t e = graph_create_on(device, body)) return e;
  cudaGraphNode_t first, second;
  const GraphNodeParams host = host_step(c);
  cudaError_t e = server_add_node(&first, *body, nullptr, 0, nullptr, c.upload ? host : c.copy);
  if (!e) e = server_add_node(&second, *body, &first, 1, nullptr, c.upload ? c.copy : host);
  if (e) {
    graph_destroy(*body);
    *body = nullptr;
  }
  return e;
}

// The staged copy a child graph node runs, if it is one: its graph holds
// two nodes, one a host node running a staged copy's host function.
std::shared_ptr<StagedCopy> staged_in(int device, const GraphNodeParams& child, cudaGraphNode_t* host = nullptr,
                                      cudaGraphNode_t* copy = nullptr) {
  if (child.type != cudaGraphNodeTypeGraph) return nullptr;
  cudaGraph_t body = graph_handles().intern(device, child.handle);
  cudaGraphNode_t nodes[2];
  size_t n = 2;
  if (graph_get_nodes(body, nodes, &n, false) || n != 2) return nullptr;
  std::shared_ptr<StagedCopy> found;
  for (size_t i = 0; i < 2; ++i) {
    GraphNodeParams p;
    if (server_node_params(nodes[i], &p)) return nullptr;
    if (p.type == cudaGraphNodeTypeHost) {
      found = find_staged(p.handle);
      if (host) *host = nodes[i];
    } else if (copy) {
      *copy = nodes[i];
    }
  }
  return found;
}

}  // namespace

bool names_pageable(const GraphNodeParams& p) {
  return p.type == cudaGraphNodeTypeMemcpy && (p.host_sides & (proto::kPageableDst | proto::kPageableSrc));
}

cudaError_t add_staged_copy(cudaGraphNode_t* node, cudaGraph_t graph, int device, const cudaGraphNode_t* deps,
                            size_t n, const cudaGraphEdgeData* edges, const GraphNodeParams& p) {
  std::shared_ptr<StagedCopy> c;
  if (cudaError_t e = make_staged(device, p, &c)) return e;
  cudaGraph_t body = nullptr;
  cudaError_t e = make_body(device, *c, &body);
  GraphNodeParams child;
  if (!e) e = child_node(device, body, &child);
  if (!e) e = server_add_node(node, graph, deps, n, edges, child);
  if (!e) {
    // The node holds a copy of the body; the copy's reference goes to that
    // graph, which CUDA treats as the node's own.
    cudaGraph_t embedded;
    e = child_graph_node_get_graph(*node, &embedded);
    if (!e) e = graph_user_object(embedded, c->object, 1, 0, true);
    if (e) graph_destroy_node(*node);
  }
  if (body) graph_destroy(body);
  release(*c);
  return e;
}

cudaError_t application_view(int device, GraphNodeParams* p, bool* staged) {
  auto c = staged_in(device, *p);
  *staged = c != nullptr;
  if (c) *p = c->app;
  return cudaSuccess;
}

cudaError_t set_staged_copy(cudaGraphNode_t node, int device, const GraphNodeParams& p) {
  GraphNodeParams child;
  if (cudaError_t e = server_node_params(node, &child)) return e;
  cudaGraphNode_t host_node, copy_node;
  auto old = staged_in(device, child, &host_node, &copy_node);
  if (!old) return cudaErrorInvalidValue;
  std::shared_ptr<StagedCopy> c;
  if (cudaError_t e = make_staged(device, p, &c)) return e;
  cudaGraph_t body = graph_handles().intern(device, child.handle);
  if (c->local != old->local) {
    RGPU_LOG(warn, "a graph copy node between two host buffers cannot be set to copy to or from the device through "
                   "rgpu, nor the other way round: make a new node");
    release(*c);
    return cudaErrorNotSupported;
  }
  cudaError_t e = c->local ? cudaSuccess : server_set_params(copy_node, c->copy);
  if (!e) e = server_set_params(host_node, host_step(*c));
  if (!e && c->upload != old->upload) {
    // The other direction: the host node moves to the other end.
    cudaGraphNode_t from[2] = {host_node, copy_node}, to[2] = {copy_node, host_node};
    e = graph_change_dependencies(body, old->upload ? from : to, old->upload ? to : from, nullptr, 1, false);
    if (!e) e = graph_change_dependencies(body, c->upload ? from : to, c->upload ? to : from, nullptr, 1, true);
  }
  // The old copy stays the graph's until the graph goes: only references
  // this process holds can be named to the server, and it holds none.
  if (!e) e = graph_user_object(body, c->object, 1, 0, true);
  release(*c);
  return e;
}

cudaError_t exec_set_staged_copy(cudaGraphExec_t exec, cudaGraphNode_t node, int device, const GraphNodeParams& p) {
  std::shared_ptr<StagedCopy> c;
  if (cudaError_t e = make_staged(device, p, &c)) return e;
  // The executable graph takes copies of the body's references with the body.
  cudaGraph_t body = nullptr;
  cudaError_t e = make_body(device, *c, &body);
  if (!e) e = graph_user_object(body, c->object, 1, 0, true);
  GraphNodeParams child;
  if (!e) e = child_node(device, body, &child);
  if (!e) e = server_exec_set_params(exec, node, child);
  if (body) graph_destroy(body);
  release(*c);
  return e;
}

}  // namespace rgpu::client
