// Graph nodes as the application sees them, for both APIs: a copy with a
// pageable host side becomes a staged copy node (staged_copy.hpp) and is a
// copy node again when read; everything else goes to the server as it is.
// And the shape every node call of both APIs has: find the device of the
// graph (or node), build the wire parameters for it with the API's own
// conversion, then add, set or read the node.
#pragma once
#include <cuda_runtime_api.h>

#include "client/graph/node_params.hpp"
#include "client/graph/server_calls.hpp"

namespace rgpu::client {

cudaError_t graph_add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                           const cudaGraphEdgeData* edges, const GraphNodeParams& p, AddedNode* added = nullptr);
// As the application made the node (a staged copy node is a copy node).
cudaError_t node_get_params(cudaGraphNode_t node, GraphNodeParams* p);
cudaError_t node_set_params(cudaGraphNode_t node, const GraphNodeParams& p);
cudaError_t node_get_type(cudaGraphNode_t node, cudaGraphNodeType* type);
cudaError_t graph_exec_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node, const GraphNodeParams& p);

// Adds a node whose parameters `make(device, &p)` builds.
template <typename Make>
cudaError_t add_made(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                     const cudaGraphEdgeData* edges, Make&& make) {
  int device;
  if (cudaError_t e = graph_device(graph, &device)) return e;
  GraphNodeParams p;
  if (cudaError_t e = make(device, &p)) return e;
  return graph_add_node(node, graph, deps, n, edges, p);
}

template <typename Make>
cudaError_t set_made(cudaGraphNode_t node, Make&& make) {
  int device;
  if (cudaError_t e = node_device(node, &device)) return e;
  GraphNodeParams p;
  if (cudaError_t e = make(device, &p)) return e;
  return node_set_params(node, p);
}

template <typename Make>
cudaError_t exec_set_made(cudaGraphExec_t exec, cudaGraphNode_t node, Make&& make) {
  int device;
  if (cudaError_t e = node_device(node, &device)) return e;
  GraphNodeParams p;
  if (cudaError_t e = make(device, &p)) return e;
  return graph_exec_node_set_params(exec, node, p);
}

// A node's parameters, which must be of `type`; `read(device, p)` fills the
// application's structure at `out`.
template <typename Read>
cudaError_t get_read(cudaGraphNode_t node, cudaGraphNodeType type, const void* out, Read&& read) {
  if (!out) return cudaErrorInvalidValue;
  int device;
  if (cudaError_t e = node_device(node, &device)) return e;
  GraphNodeParams p;
  if (cudaError_t e = node_get_params(node, &p)) return e;
  if (p.type != type) return cudaErrorInvalidValue;
  return read(device, p);
}

// A memory allocation node; its address goes to *dptr.
inline cudaError_t add_alloc(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                             const cudaGraphEdgeData* edges, const cudaMemPoolProps& props,
                             const cudaMemAccessDesc* access, size_t access_count, size_t bytes, void** dptr) {
  int device;
  if (cudaError_t e = graph_device(graph, &device)) return e;
  GraphNodeParams p;
  if (cudaError_t e = alloc_node(device, props, access, access_count, bytes, &p)) return e;
  AddedNode added;
  if (cudaError_t e = graph_add_node(node, graph, deps, n, edges, p, &added)) return e;
  *dptr = added.allocated;
  remember_alloc(*node, props, access, access_count);
  return cudaSuccess;
}

// A conditional node; *bodies is pointed at its body graphs.
inline cudaError_t add_conditional(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                                   const cudaGraphEdgeData* edges, unsigned type, unsigned size,
                                   cudaGraphConditionalHandle handle, cudaGraph_t** bodies) {
  GraphNodeParams p;
  if (cudaError_t e = conditional_node(type, size, handle, &p)) return e;
  AddedNode added;
  if (cudaError_t e = graph_add_node(node, graph, deps, n, edges, p, &added)) return e;
  *bodies = remember_bodies(*node, std::move(added.bodies));
  return cudaSuccess;
}

}  // namespace rgpu::client
