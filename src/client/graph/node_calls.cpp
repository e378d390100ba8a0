#include "client/graph/node_calls.hpp"

#include "client/graph/staged_copy.hpp"
#include "common/log.hpp"

namespace rgpu::client {
namespace {

// Whether new copy parameters for `node` go to a staged copy node (see
// graph/staged_copy.hpp); a node the server runs as a copy cannot take
// pageable memory, as it would have to become another kind of node.
cudaError_t staged_target(cudaGraphNode_t node, const GraphNodeParams& p, int* device, bool* staged) {
  *staged = false;
  if (p.type != cudaGraphNodeTypeMemcpy) return cudaSuccess;
  if (cudaError_t e = node_device(node, device)) return e;
  GraphNodeParams now;
  if (cudaError_t e = server_node_params(node, &now)) return e;
  if (cudaError_t e = application_view(*device, &now, staged)) return e;
  if (!*staged && names_pageable(p)) {
    RGPU_LOG(warn, "a graph copy node made on device or page-locked memory cannot take pageable host memory "
                   "through rgpu: make the node with pageable memory from the start");
    return cudaErrorNotSupported;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t graph_add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                           const cudaGraphEdgeData* edges, const GraphNodeParams& p, AddedNode* added) {
  if (!names_pageable(p)) return server_add_node(node, graph, deps, n, edges, p, added);
  if (!node) return cudaErrorInvalidValue;
  int device;
  if (cudaError_t e = graph_device(graph, &device)) return e;
  return add_staged_copy(node, graph, device, deps, n, edges, p);
}

cudaError_t node_get_params(cudaGraphNode_t node, GraphNodeParams* p) {
  int device;
  if (cudaError_t e = node_device(node, &device)) return e;
  if (cudaError_t e = server_node_params(node, p)) return e;
  bool staged;
  return application_view(device, p, &staged);
}

cudaError_t node_set_params(cudaGraphNode_t node, const GraphNodeParams& p) {
  int device;
  bool staged;
  if (cudaError_t e = staged_target(node, p, &device, &staged)) return e;
  return staged ? set_staged_copy(node, device, p) : server_set_params(node, p);
}

cudaError_t node_get_type(cudaGraphNode_t node, cudaGraphNodeType* type) {
  if (cudaError_t e = server_node_type(node, type)) return e;
  if (*type != cudaGraphNodeTypeGraph) return cudaSuccess;
  // A staged copy node is a copy node to the application.
  GraphNodeParams p;
  if (cudaError_t e = node_get_params(node, &p)) return e;
  *type = static_cast<cudaGraphNodeType>(p.type);
  return cudaSuccess;
}

cudaError_t graph_exec_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node, const GraphNodeParams& p) {
  int device;
  bool staged;
  if (cudaError_t e = staged_target(node, p, &device, &staged)) return e;
  return staged ? exec_set_staged_copy(exec, node, device, p) : server_exec_set_params(exec, node, p);
}

}  // namespace rgpu::client
