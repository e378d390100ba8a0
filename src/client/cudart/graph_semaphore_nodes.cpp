// External semaphore signal and wait nodes (runtime API): their semaphores
// and values go to the server's graph (client/graph/semaphore_nodes.hpp).
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/graph/node_calls.hpp"
#include "client/graph/semaphore_nodes.hpp"

using namespace rgpu::client;

namespace {

using Deps = const cudaGraphNode_t*;

template <typename NodeParams>
auto make(cudaGraphNodeType type, const NodeParams* n) {
  return [=](int device, GraphNodeParams* p) { return semaphore_node(device, type, n, p); };
}

}  // namespace

extern "C" cudaError_t cudaGraphAddExternalSemaphoresSignalNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                                Deps deps, size_t n,
                                                                const cudaExternalSemaphoreSignalNodeParams* params) {
  return api([&] { return add_made(pGraphNode, graph, deps, n, nullptr, make(cudaGraphNodeTypeExtSemaphoreSignal, params)); });
}

extern "C" cudaError_t cudaGraphAddExternalSemaphoresWaitNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                                              Deps deps, size_t n,
                                                              const cudaExternalSemaphoreWaitNodeParams* params) {
  return api([&] { return add_made(pGraphNode, graph, deps, n, nullptr, make(cudaGraphNodeTypeExtSemaphoreWait, params)); });
}

extern "C" cudaError_t cudaGraphExternalSemaphoresSignalNodeGetParams(cudaGraphNode_t node,
                                                                      cudaExternalSemaphoreSignalNodeParams* out) {
  return api([&] {
    return get_read(node, cudaGraphNodeTypeExtSemaphoreSignal, out, [&](int d, const GraphNodeParams& p) {
      *out = node_signal_params(node, d, p);
      return cudaSuccess;
    });
  });
}

extern "C" cudaError_t cudaGraphExternalSemaphoresWaitNodeGetParams(cudaGraphNode_t node,
                                                                    cudaExternalSemaphoreWaitNodeParams* out) {
  return api([&] {
    return get_read(node, cudaGraphNodeTypeExtSemaphoreWait, out, [&](int d, const GraphNodeParams& p) {
      *out = node_wait_params(node, d, p);
      return cudaSuccess;
    });
  });
}

extern "C" cudaError_t cudaGraphExternalSemaphoresSignalNodeSetParams(
    cudaGraphNode_t node, const cudaExternalSemaphoreSignalNodeParams* params) {
  return api([&] { return set_made(node, make(cudaGraphNodeTypeExtSemaphoreSignal, params)); });
}

extern "C" cudaError_t cudaGraphExternalSemaphoresWaitNodeSetParams(cudaGraphNode_t node,
                                                                    const cudaExternalSemaphoreWaitNodeParams* params) {
  return api([&] { return set_made(node, make(cudaGraphNodeTypeExtSemaphoreWait, params)); });
}

extern "C" cudaError_t cudaGraphExecExternalSemaphoresSignalNodeSetParams(
    cudaGraphExec_t exec, cudaGraphNode_t node, const cudaExternalSemaphoreSignalNodeParams* params) {
  return api([&] { return exec_set_made(exec, node, make(cudaGraphNodeTypeExtSemaphoreSignal, params)); });
}

extern "C" cudaError_t cudaGraphExecExternalSemaphoresWaitNodeSetParams(
    cudaGraphExec_t exec, cudaGraphNode_t node, const cudaExternalSemaphoreWaitNodeParams* params) {
  return api([&] { return exec_set_made(exec, node, make(cudaGraphNodeTypeExtSemaphoreWait, params)); });
}
