#include "client/graph/handles.hpp"

namespace rgpu::client {

HandleRegistry<cudaGraph_t>& graph_handles() {
  static auto* r = new HandleRegistry<cudaGraph_t>;
  return *r;
}
HandleRegistry<cudaGraphNode_t>& graph_node_handles() {
  static auto* r = new HandleRegistry<cudaGraphNode_t>;
  return *r;
}
HandleRegistry<cudaGraphExec_t>& graph_exec_handles() {
  static auto* r = new HandleRegistry<cudaGraphExec_t>;
  return *r;
}

HandleRegistry<cudaUserObject_t>& user_object_handles() {
  static auto* r = new HandleRegistry<cudaUserObject_t>;
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
