// Graph node parameters from what the application gives (runtime or driver
// structures, already taken apart) to the wire form, for a graph on
// `device`, and back. What cannot run on the server is refused here with the
// reason logged. Over shm, a copy side in page-locked memory shared with the
// server is marked kHost*; one in other host memory (over tcp and ucx, any
// host memory) kHost* and kPageable*: such a node becomes a staged copy
// (staged_copy.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "client/core/module_registry.hpp"
#include "protocol/graph_node.hpp"

namespace rgpu::client {

using proto::GraphNodeParams;

// Arguments as a launch takes them: kernelParams, or the driver's `extra`
// buffer (pack_launch_args). Either way the node holds the packed arguments,
// so its get-params hands back kernelParams pointers into them.
cudaError_t kernel_node(int device, const LoadedKernel& k, dim3 grid, dim3 block, unsigned shared_mem,
                        void** params, void** extra, GraphNodeParams* p);
// A pitched copy of `height` rows of `width` bytes.
cudaError_t copy_node(int device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                      size_t height, cudaMemcpyKind kind, GraphNodeParams* p);
// What a 3-D copy moves: `depth` slices of `height` rows of `width` bytes.
struct CopyBox {
  size_t width = 0, height = 0, depth = 1;
};
// One side of a copy: memory from `ptr`, the first byte copied, rows `pitch`
// bytes and slices `slice` rows apart; or, where `array` is set, a CUDA
// array of this process, the copy starting at byte x, row y, slice z of it.
struct CopyNodeSide {
  void* ptr = nullptr;
  size_t pitch = 0, slice = 0;
  cudaArray_const_t array = nullptr;
  size_t x = 0, y = 0, z = 0;
};
// Between two host buffers, one of them pageable, the node is a host node
// copying in this process (staged_copy.hpp). An array must be of `device`
// and hold the region.
cudaError_t copy_box_node(int device, const CopyNodeSide& dst, const CopyNodeSide& src, const CopyBox& box,
                          cudaMemcpyKind kind, GraphNodeParams* p);
cudaError_t copy3d_node(int device, const cudaMemcpy3DParms& m, GraphNodeParams* p);
// A copy to or from a __device__ variable, offset bytes in.
cudaError_t symbol_copy_node(int device, const void* symbol, void* other, size_t count, size_t offset,
                             cudaMemcpyKind kind, bool to_symbol, GraphNodeParams* p);
cudaError_t memset_node(void* dst, size_t pitch, unsigned value, unsigned element_size, size_t width,
                        size_t height, GraphNodeParams* p);
cudaError_t event_node(int device, cudaGraphNodeType type, cudaEvent_t event, GraphNodeParams* p);
// A child graph node: a copy of `graph`, or (cudaGraphChildGraphOwnershipMove)
// the graph itself, whose nodes an executable graph then updates (XLA does).
cudaError_t child_node(int device, cudaGraph_t graph, GraphNodeParams* p,
                       int ownership = cudaGraphChildGraphOwnershipClone);
// Memory a graph allocates on its device (pinned, the device's own access
// only) and frees.
cudaError_t alloc_node(int device, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
                       size_t access_count, size_t bytes, GraphNodeParams* p);
cudaError_t free_node(int device, void* dptr, GraphNodeParams* p);
// What the application asked of an allocation node, for its get-params (a
// captured one gets the device's plain pinned properties, no access list).
void remember_alloc(cudaGraphNode_t node, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
                    size_t access_count);
void alloc_request(cudaGraphNode_t node, int device, cudaMemPoolProps* props, const cudaMemAccessDesc** access,
                   size_t* access_count);
// A conditional node on `handle` (cudaGraphConditionalHandleCreate's); the
// server makes its `size` body graphs with it.
cudaError_t conditional_node(unsigned type, unsigned size, cudaGraphConditionalHandle handle, GraphNodeParams* p);
// The body graphs of a conditional node, as CUDA hands them out: an array
// that stays valid while the node lives.
cudaGraph_t* remember_bodies(cudaGraphNode_t node, std::vector<cudaGraph_t> bodies);
// The host function runs in this process each time the graph reaches it.
cudaError_t host_node(int device, cudaHostFn_t fn, void* user_data, GraphNodeParams* p);

// Back from the wire: the pieces CUDA's get-params structures hold.
cudaEvent_t node_event(int device, const GraphNodeParams& p);
// fn and user_data of a host node made by this process.
bool node_host_function(const GraphNodeParams& p, cudaHostFn_t* fn, void** user_data);
// A kernel node's argument pointers (kernelParams), kept until the next call
// for the same node: CUDA's get-params hands out pointers the same way.
void** node_kernel_params(cudaGraphNode_t node, const LoadedKernel& k, const GraphNodeParams& p);
// The same arguments as the driver's `extra` list (one packed buffer), which
// NVIDIA's driver hands back for a node made with one.
void** node_kernel_extra(cudaGraphNode_t node, const LoadedKernel& k, const GraphNodeParams& p);
// A copy node's parameters as the runtime has them: arrays are this
// process's handles of the server's arrays of `device` again.
cudaMemcpy3DParms node_copy3d(int device, const GraphNodeParams& p);
// This process's handle of array `remote` of `device`; null if it has none.
cudaArray_t node_array(int device, uint64_t remote);

}  // namespace rgpu::client
