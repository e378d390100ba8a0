#include "client/graph/handles.hpp"

namespace rgpu::client {

InternedHandles<cudaGraph_t>& graph_handles() {
  static auto* r = new InternedHandles<cudaGraph_t>;
  return *r;
}
InternedHandles<cudaGraphNode_t>& graph_node_handles() {
  static auto* r = new InternedHandles<cudaGraphNode_t>;
  return *r;
}
InternedHandles<cudaGraphExec_t>& graph_exec_handles() {
  static auto* r = new InternedHandles<cudaGraphExec_t>;
  return *r;
}

InternedHandles<cudaUserObject_t>& user_object_handles() {
  static auto* r = new InternedHandles<cudaUserObject_t>;
  return *r;
}

cudaError_t graph_device(cudaGraph_t graph, int* device) {
  RemoteObject o;
  if (cudaError_t e = find_handle(graph_handles(), graph, &o)) return e;
  *device = o.device;
  return cudaSuccess;
}

cudaError_t node_device(cudaGraphNode_t node, int* device) {
  RemoteObject o;
  if (cudaError_t e = find_handle(graph_node_handles(), node, &o)) return e;
  *device = o.device;
  return cudaSuccess;
}

}  // namespace rgpu::client
