// Batch memory-operation graph nodes (graph_mem_op_nodes.cpp), for
// cuGraphAddNode and cuGraphNodeSetParams too.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/graph/node_params.hpp"

namespace rgpu::client {

// The operations of `np`, checked and packed for a graph on `device`.
cudaError_t mem_op_node(int device, const CUDA_BATCH_MEM_OP_NODE_PARAMS* np, GraphNodeParams* p);

}  // namespace rgpu::client
