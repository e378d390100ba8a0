// Client-side graph, graph-node, executable-graph and user-object handles:
// one client handle per (device, server handle), as the server names the
// same node each time it lists it. Handles the client never made are refused.
#pragma once
#include <cuda_runtime_api.h>

#include "client/core/handles.hpp"

namespace rgpu::client {

HandleRegistry<cudaGraph_t>& graph_handles();
HandleRegistry<cudaGraphNode_t>& graph_node_handles();
HandleRegistry<cudaGraphExec_t>& graph_exec_handles();
HandleRegistry<cudaUserObject_t>& user_object_handles();

// The virtual device a graph or node lives on.
cudaError_t graph_device(cudaGraph_t graph, int* device);
cudaError_t node_device(cudaGraphNode_t node, int* device);

}  // namespace rgpu::client
