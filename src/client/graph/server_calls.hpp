// The graph room's requests to the server: graphs, nodes as the server holds
// them, executable graphs, stream capture, user objects and staging slabs
// (cudaGraph_t is CUgraph, cudaGraphNode_t CUgraphNode, cudaGraphExec_t
// CUgraphExec). Node parameters come in the wire form (node_params.hpp);
// what a node is to the application (a staged copy is a copy node) is
// node_calls.hpp's, which stands above this.
#pragma once
#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "client/graph/handles.hpp"
#include "protocol/graph_node.hpp"

namespace rgpu::client {

using proto::GraphNodeParams;

cudaError_t graph_create(cudaGraph_t* graph, unsigned flags);
cudaError_t graph_create_on(int device, cudaGraph_t* graph, unsigned flags = 0);
cudaError_t graph_destroy(cudaGraph_t graph);
cudaError_t graph_clone(cudaGraph_t* clone, cudaGraph_t graph);
// What adding a node hands back besides the node: a memory allocation
// node's address, a conditional node's body graphs.
struct AddedNode {
  void* allocated = nullptr;
  std::vector<cudaGraph_t> bodies;
};
// The node as the server runs it (no staging).
cudaError_t server_add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                            const cudaGraphEdgeData* edges, const GraphNodeParams& p, AddedNode* added = nullptr);
cudaError_t graph_conditional_handle_create(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                            unsigned default_value, unsigned flags);
// As the server holds the node.
cudaError_t server_node_params(cudaGraphNode_t node, GraphNodeParams* p);
cudaError_t server_set_params(cudaGraphNode_t node, const GraphNodeParams& p);
cudaError_t server_node_type(cudaGraphNode_t node, cudaGraphNodeType* type);
cudaError_t graph_destroy_node(cudaGraphNode_t node);
// With nodes null, *n receives the count; else up to *n are written and *n
// is set to how many were.
cudaError_t graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* n, bool roots_only);
cudaError_t graph_get_edges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                            cudaGraphEdgeData* edges, size_t* n);
cudaError_t node_neighbours(cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* n,
                            bool dependents);
cudaError_t graph_change_dependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                      const cudaGraphEdgeData* edges, size_t n, bool add);
cudaError_t node_find_in_clone(cudaGraphNode_t* out, cudaGraphNode_t node, cudaGraph_t clone);
cudaError_t child_graph_node_get_graph(cudaGraphNode_t node, cudaGraph_t* graph);

cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags);
// cudaGraphInstantiateWithParams: cudaGraphInstantiateFlagUpload uploads on upload_stream.
cudaError_t graph_instantiate_with_params(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags,
                                          cudaStream_t upload_stream);
cudaError_t graph_exec_destroy(cudaGraphExec_t exec);
cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t graph_upload(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info);
cudaError_t server_exec_set_params(cudaGraphExec_t exec, cudaGraphNode_t node, const GraphNodeParams& p);
cudaError_t graph_node_set_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned enabled);
cudaError_t graph_node_get_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned* enabled);
cudaError_t graph_exec_get_flags(cudaGraphExec_t exec, unsigned long long* flags);
// Writes the server's DOT text to `path` on this machine.
cudaError_t graph_debug_dot_print(cudaGraph_t graph, const char* path, unsigned flags);

cudaError_t stream_begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t stream_begin_capture_to_graph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData* edges, size_t n, cudaStreamCaptureMode mode);
// *graph may be null after a capture into an existing graph, as CUDA allows.
cudaError_t stream_end_capture(cudaStream_t stream, cudaGraph_t* graph);
// deps stays valid until the next capture query of this thread, as CUDA's.
cudaError_t stream_get_capture_info(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                    cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                    const cudaGraphEdgeData** edges, size_t* n);
cudaError_t stream_update_capture_dependencies(cudaStream_t stream, const cudaGraphNode_t* deps,
                                               const cudaGraphEdgeData* edges, size_t n, unsigned flags);
// Whether a capture begun in this process may still be going on (copies
// look for a capture only then).
bool captures_may_be_active();
cudaError_t thread_exchange_stream_capture_mode(cudaStreamCaptureMode* mode);
cudaError_t kernel_node_get_attribute(cudaGraphNode_t node, cudaLaunchAttributeID attr,
                                      cudaLaunchAttributeValue* value);
cudaError_t kernel_node_set_attribute(cudaGraphNode_t node, cudaLaunchAttributeID attr,
                                      const cudaLaunchAttributeValue* value);
cudaError_t kernel_node_copy_attributes(cudaGraphNode_t dst, cudaGraphNode_t src);

// User objects: `destroy(ptr)` runs in this process when the last
// reference (the application's or a graph's) goes.
cudaError_t user_object_create(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy, unsigned refs,
                               unsigned flags);
cudaError_t user_object_create_on(int device, cudaUserObject_t* object, std::function<void()> destroy, unsigned refs,
                                  unsigned flags);
cudaError_t user_object_retain(cudaUserObject_t object, unsigned count, bool retain);
// A slab of `bytes` of the worker's page-locked memory of `device`, where
// graph copies of pageable memory are staged (staging_blocks.hpp): the
// worker's address of it.
cudaError_t graph_staging_alloc(int device, size_t bytes, uint64_t* address);
cudaError_t graph_user_object(cudaGraph_t graph, cudaUserObject_t object, unsigned count, unsigned flags,
                              bool retain);

cudaError_t device_graph_mem_attribute(int device, cudaGraphMemAttributeType attr, void* value, bool set);

}  // namespace rgpu::client
