// Graph copy nodes on pageable application memory.
//
// A graph replays its copies long after the call, each time reading or
// writing the host memory as it is then. Pageable memory is not on the
// server, so such a copy becomes a child graph node of two nodes: a host
// node, which runs in this process when the graph gets there and moves the
// bytes between the application's memory and a staging block
// (staging_blocks.hpp), and a copy between that block and the device; the
// host node goes first for uploads and last for downloads. Over shm the
// block is host memory shared with the worker and the host node copies with
// memcpy; where the server cannot reach this process (tcp, ucx) the block is
// the worker's page-locked memory and its bytes travel with the host node's
// messages on the callback connection (server/worker/host_callbacks.hpp).
// Either way the host function makes no CUDA call: CUDA may hold any call
// behind a context-wide wait (a kernel's lazy loading, cudaFree) that waits
// for the running host node, as NVIDIA's graphMemoryNodes showed.
//
// Each set of parameters (a staged copy) has its own staging block and host
// function, kept by a CUDA user object that the node's graph holds: CUDA
// hands references on to clones, executable graphs and updates, and drops
// the last one when no graph and no launch needs it. So every graph and
// executable graph keeps the parameters it was given, as with CUDA's own
// copy nodes (a graph whose node takes new parameters keeps the old copy's
// staging block until the graph goes). The application sees a copy node: the type and parameters of
// a child graph node whose host node runs a staged copy are the copy's.
#pragma once
#include <cuda_runtime_api.h>

#include "protocol/graph_node.hpp"

namespace rgpu::client {

using proto::GraphNodeParams;

// Whether a copy node's parameters name pageable host memory (copy_node's marks).
bool names_pageable(const GraphNodeParams& p);

// Adds `p` (a copy with a pageable side) to `graph` of `device` as a staged copy node.
cudaError_t add_staged_copy(cudaGraphNode_t* node, cudaGraph_t graph, int device, const cudaGraphNode_t* deps,
                            size_t n, const cudaGraphEdgeData* edges, const GraphNodeParams& p);

// `p` as the server holds a node, or, for a staged copy node, the copy the
// application made. *staged says which.
cudaError_t application_view(int device, GraphNodeParams* p, bool* staged);

// New copy parameters for a staged copy node, in its graph or in an executable graph.
cudaError_t set_staged_copy(cudaGraphNode_t node, int device, const GraphNodeParams& p);
cudaError_t exec_set_staged_copy(cudaGraphExec_t exec, cudaGraphNode_t node, int device, const GraphNodeParams& p);

}  // namespace rgpu::client
