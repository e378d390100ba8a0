// External semaphore signal and wait nodes of both APIs: the application's
// semaphores and parameters to the wire form for a graph on `device`, and
// back for the get-params queries.
#pragma once
#include <cuda_runtime_api.h>

#include "client/core/external_handles.hpp"
#include "protocol/graph_node.hpp"

namespace rgpu::client {

// NodeParams: the runtime's cudaExternalSemaphore{Signal,Wait}NodeParams
// (V2 too; the driver's CUDA_EXT_SEM_*_NODE_PARAMS are laid out alike).
// Every semaphore must be of the graph's device.
template <typename NodeParams>
cudaError_t semaphore_node(int device, cudaGraphNodeType type, const NodeParams* n, proto::GraphNodeParams* p) {
  if (!n) return cudaErrorInvalidValue;
  int owner;
  if (cudaError_t e = to_semaphore_ops(n->extSemArray, n->paramsArray, n->numExtSems, &owner, &p->semaphores))
    return e;
  if (owner >= 0 && owner != device) return cudaErrorInvalidValue;
  p->type = type;
  return cudaSuccess;
}

// A node's semaphores and parameters in arrays kept with the node until its
// next query, as CUDA's get-params hand them out.
cudaExternalSemaphoreSignalNodeParams node_signal_params(cudaGraphNode_t node, int device,
                                                         const proto::GraphNodeParams& p);
cudaExternalSemaphoreWaitNodeParams node_wait_params(cudaGraphNode_t node, int device,
                                                     const proto::GraphNodeParams& p);

}  // namespace rgpu::client
