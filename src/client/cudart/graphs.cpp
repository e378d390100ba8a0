// CUDA graphs (runtime API): graphs, nodes and executable graphs are server
// objects; node parameters are converted here from the runtime's structures
// (see client/graph/node_params.hpp for what a node may hold).
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/graph/node_calls.hpp"
#include "client/core/module_registry.hpp"
#include "client/graph/semaphore_nodes.hpp"
#include "client/move/moved_event_times.hpp"

using namespace rgpu::client;

namespace {

using Deps = const cudaGraphNode_t*;

template <typename Make>
cudaError_t add_with(cudaGraphNode_t* node, cudaGraph_t graph, Deps deps, size_t n, const cudaGraphEdgeData* edges,
                Make&& make) {
  return api([&] { return add_made(node, graph, deps, n, edges, make); });
}

template <typename Make>
cudaError_t set_with(cudaGraphNode_t node, Make&& make) {
  return api([&] { return set_made(node, make); });
}

template <typename Make>
cudaError_t exec_set_with(cudaGraphExec_t exec, cudaGraphNode_t node, Make&& make) {
  return api([&] { return exec_set_made(exec, node, make); });
}

template <typename Read>
cudaError_t get_with(cudaGraphNode_t node, cudaGraphNodeType type, const void* out, Read&& read) {
  return api([&] { return get_read(node, type, out, read); });
}

cudaError_t kernel_params(int device, const void* func, dim3 grid, dim3 block, unsigned smem, void** params, void** extra,
                   GraphNodeParams* p) {
  KernelEntry* k = ModuleRegistry::get().find_kernel(func);
  if (!k) return cudaErrorInvalidDeviceFunction;
  const LoadedKernel* lk;
  if (cudaError_t e = ModuleRegistry::get().kernel_on(k, device, &lk)) return e;
  return kernel_node(device, *lk, grid, block, smem, params, extra, p);
}

cudaError_t kernel_params(int device, const cudaKernelNodeParams* k, GraphNodeParams* p) {
  if (!k) return cudaErrorInvalidValue;
  return kernel_params(device, k->func, k->gridDim, k->blockDim, k->sharedMemBytes, k->kernelParams, k->extra, p);
}

cudaError_t copy3d_params(int device, const cudaMemcpy3DParms* m, GraphNodeParams* p) {
  return m ? copy3d_node(device, *m, p) : cudaErrorInvalidValue;
}

cudaError_t memset_params(const cudaMemsetParams* m, GraphNodeParams* p) {
  if (!m) return cudaErrorInvalidValue;
  return memset_node(m->dst, m->pitch, m->value, m->elementSize, m->width, m->height, p);
}

cudaError_t host_params(int device, const cudaHostNodeParams* h, GraphNodeParams* p) {
  return h ? host_node(device, h->fn, h->userData, p) : cudaErrorInvalidValue;
}

// cudaGraphAddNode's and cudaGraphNodeSetParams's tagged union.
cudaError_t generic_params(int device, const cudaGraphNodeParams* g, GraphNodeParams* p) {
  if (!g) return cudaErrorInvalidValue;
  switch (g->type) {
    case cudaGraphNodeTypeKernel: {
      const auto& k = g->kernel;
      return kernel_params(device, k.func, k.gridDim, k.blockDim, k.sharedMemBytes, k.kernelParams, k.extra, p);
    }
    case cudaGraphNodeTypeMemcpy:
      if (g->memcpy.flags) return cudaErrorInvalidValue;
      return copy3d_node(device, g->memcpy.copyParams, p);
    case cudaGraphNodeTypeMemset: {
      const auto& m = g->memset;
      return memset_node(m.dst, m.pitch, m.value, m.elementSize, m.width, m.height, p);
    }
    case cudaGraphNodeTypeHost: return host_node(device, g->host.fn, g->host.userData, p);
    case cudaGraphNodeTypeGraph: return child_node(device, g->graph.graph, p, g->graph.ownership);
    case cudaGraphNodeTypeWaitEvent: return event_node(device, cudaGraphNodeTypeWaitEvent, g->eventWait.event, p);
    case cudaGraphNodeTypeEventRecord:
      return event_node(device, cudaGraphNodeTypeEventRecord, g->eventRecord.event, p);
    case cudaGraphNodeTypeEmpty: p->type = cudaGraphNodeTypeEmpty; return cudaSuccess;
    case cudaGraphNodeTypeMemFree: return free_node(device, g->free.dptr, p);
    case cudaGraphNodeTypeExtSemaphoreSignal:
      return semaphore_node(device, cudaGraphNodeTypeExtSemaphoreSignal, &g->extSemSignal, p);
    case cudaGraphNodeTypeExtSemaphoreWait:
      return semaphore_node(device, cudaGraphNodeTypeExtSemaphoreWait, &g->extSemWait, p);
    // Conditional nodes keep their parameters (add_conditional makes them).
    case cudaGraphNodeTypeConditional: return cudaErrorInvalidValue;
    default: return cudaErrorNotSupported;  // allocations (add_alloc: they hand out an address)
  }
}

GraphNodeParams empty_params() { return GraphNodeParams{}; }

}  // namespace

extern "C" cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  return api([&] { return graph_create(pGraph, flags); });
}

extern "C" cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return api([&] { return graph_destroy(graph); });
}

extern "C" cudaError_t cudaGraphClone(cudaGraph_t* pGraphClone, cudaGraph_t originalGraph) {
  return api([&] { return graph_clone(pGraphClone, originalGraph); });
}

extern "C" cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                              const cudaKernelNodeParams* pNodeParams) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) { return kernel_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                              const cudaMemcpy3DParms* pCopyParams) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) { return copy3d_params(d, pCopyParams, p); });
}

extern "C" cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                                void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return add_with(pGraphNode, graph, deps, n, nullptr,
             [&](int d, GraphNodeParams* p) { return copy_node(d, dst, count, src, count, count, 1, kind, p); });
}

extern "C" cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                                      size_t n, const void* symbol, const void* src, size_t count,
                                                      size_t offset, cudaMemcpyKind kind) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) {
    return symbol_copy_node(d, symbol, const_cast<void*>(src), count, offset, kind, true, p);
  });
}

extern "C" cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                                        size_t n, void* dst, const void* symbol, size_t count,
                                                        size_t offset, cudaMemcpyKind kind) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) {
    return symbol_copy_node(d, symbol, dst, count, offset, kind, false, p);
  });
}

extern "C" cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                              const cudaMemsetParams* pMemsetParams) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int, GraphNodeParams* p) { return memset_params(pMemsetParams, p); });
}

extern "C" cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int, GraphNodeParams* p) {
    *p = empty_params();
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                                  size_t n, cudaGraph_t childGraph) {
  return add_with(pGraphNode, graph, deps, n, nullptr,
             [&](int d, GraphNodeParams* p) { return child_node(d, childGraph, p); });
}

extern "C" cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                                   size_t n, cudaEvent_t event) {
  return add_with(pGraphNode, graph, deps, n, nullptr,
             [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, event, p); });
}

extern "C" cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                                 size_t n, cudaEvent_t event) {
  return add_with(pGraphNode, graph, deps, n, nullptr,
             [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, event, p); });
}

extern "C" cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                            const cudaHostNodeParams* pNodeParams) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) { return host_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphAddNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps,
                                        const cudaGraphEdgeData* dependencyData, size_t n,
                                        cudaGraphNodeParams* nodeParams) {
  return api([&]() -> cudaError_t {
    if (nodeParams && nodeParams->type == cudaGraphNodeTypeMemAlloc) {
      auto& a = nodeParams->alloc;
      return add_alloc(pGraphNode, graph, deps, n, dependencyData, a.poolProps, a.accessDescs, a.accessDescCount,
                       a.bytesize, &a.dptr);
    }
    if (nodeParams && nodeParams->type == cudaGraphNodeTypeConditional) {
      auto& c = nodeParams->conditional;
      return add_conditional(pGraphNode, graph, deps, n, dependencyData, c.type, c.size, c.handle, &c.phGraph_out);
    }
    return add_made(pGraphNode, graph, deps, n, dependencyData,
                    [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
  });
}

extern "C" cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* pHandle_out, cudaGraph_t graph,
                                                        unsigned int defaultLaunchValue, unsigned int flags) {
  return api([&] { return graph_conditional_handle_create(pHandle_out, graph, defaultLaunchValue, flags); });
}

extern "C" cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, cudaGraphNodeParams* nodeParams) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
}

extern "C" cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                                  cudaGraphNodeParams* nodeParams) {
  return exec_set_with(graphExec, node, [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
}

extern "C" cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams* pNodeParams) {
  return get_with(node, cudaGraphNodeTypeKernel, pNodeParams, [&](int d, const GraphNodeParams& p) -> cudaError_t {
    KernelEntry* k = ModuleRegistry::get().find_loaded(d, p.function);
    if (!k) return cudaErrorInvalidDeviceFunction;
    const LoadedKernel* lk;
    if (cudaError_t e = ModuleRegistry::get().kernel_on(k, d, &lk)) return e;
    *pNodeParams = cudaKernelNodeParams{};
    pNodeParams->func = const_cast<void*>(k->host_function);
    pNodeParams->gridDim = p.grid;
    pNodeParams->blockDim = p.block;
    pNodeParams->sharedMemBytes = p.shared_mem;
    pNodeParams->kernelParams = node_kernel_params(node, *lk, p);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return kernel_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, cudaMemcpy3DParms* pNodeParams) {
  return get_with(node, cudaGraphNodeTypeMemcpy, pNodeParams, [&](int d, const GraphNodeParams& p) {
    *pNodeParams = node_copy3d(d, p);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const cudaMemcpy3DParms* pNodeParams) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return copy3d_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst, const void* src, size_t count,
                                                      cudaMemcpyKind kind) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return copy_node(d, dst, count, src, count, count, 1, kind, p); });
}

extern "C" cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void* symbol, const void* src,
                                                            size_t count, size_t offset, cudaMemcpyKind kind) {
  return set_with(node, [&](int d, GraphNodeParams* p) {
    return symbol_copy_node(d, symbol, const_cast<void*>(src), count, offset, kind, true, p);
  });
}

extern "C" cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void* dst, const void* symbol,
                                                              size_t count, size_t offset, cudaMemcpyKind kind) {
  return set_with(node,
             [&](int d, GraphNodeParams* p) { return symbol_copy_node(d, symbol, dst, count, offset, kind, false, p); });
}

extern "C" cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, cudaMemsetParams* pNodeParams) {
  return get_with(node, cudaGraphNodeTypeMemset, pNodeParams, [&](int, const GraphNodeParams& p) {
    *pNodeParams = cudaMemsetParams{reinterpret_cast<void*>(p.dst), p.dst_pitch, p.value, p.element_size, p.width,
                                    p.height};
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const cudaMemsetParams* pNodeParams) {
  return set_with(node, [&](int, GraphNodeParams* p) { return memset_params(pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* pNodeParams) {
  return get_with(node, cudaGraphNodeTypeHost, pNodeParams, [&](int, const GraphNodeParams& p) {
    return node_host_function(p, &pNodeParams->fn, &pNodeParams->userData) ? cudaSuccess : cudaErrorInvalidValue;
  });
}

extern "C" cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* pNodeParams) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return host_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* pGraph) {
  return api([&] { return child_graph_node_get_graph(node, pGraph); });
}

extern "C" cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out) {
  return get_with(node, cudaGraphNodeTypeEventRecord, event_out, [&](int d, const GraphNodeParams& p) {
    *event_out = node_event(d, p);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, event, p); });
}

extern "C" cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event_out) {
  return get_with(node, cudaGraphNodeTypeWaitEvent, event_out, [&](int d, const GraphNodeParams& p) {
    *event_out = node_event(d, p);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return set_with(node, [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, event, p); });
}

extern "C" cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* pType) {
  return api([&] { return node_get_type(node, pType); });
}

extern "C" cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  return api([&] { return graph_destroy_node(node); });
}

extern "C" cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  return api([&] { return graph_get_nodes(graph, nodes, numNodes, false); });
}

extern "C" cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* pRootNodes, size_t* pNumRootNodes) {
  return api([&] { return graph_get_nodes(graph, pRootNodes, pNumRootNodes, true); });
}

extern "C" cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                         cudaGraphEdgeData* edgeData, size_t* numEdges) {
  return api([&] { return graph_get_edges(graph, from, to, edgeData, numEdges); });
}

extern "C" cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* pDependencies,
                                                    cudaGraphEdgeData* edgeData, size_t* pNumDependencies) {
  return api([&] { return node_neighbours(node, pDependencies, edgeData, pNumDependencies, false); });
}

extern "C" cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* pDependentNodes,
                                                      cudaGraphEdgeData* edgeData, size_t* pNumDependentNodes) {
  return api([&] { return node_neighbours(node, pDependentNodes, edgeData, pNumDependentNodes, true); });
}

extern "C" cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                const cudaGraphNode_t* to, const cudaGraphEdgeData* edgeData,
                                                size_t numDependencies) {
  return api([&] { return graph_change_dependencies(graph, from, to, edgeData, numDependencies, true); });
}

extern "C" cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                   const cudaGraphNode_t* to, const cudaGraphEdgeData* edgeData,
                                                   size_t numDependencies) {
  return api([&] { return graph_change_dependencies(graph, from, to, edgeData, numDependencies, false); });
}

extern "C" cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* pNode, cudaGraphNode_t originalNode,
                                                cudaGraph_t clonedGraph) {
  return api([&] { return node_find_in_clone(pNode, originalNode, clonedGraph); });
}

extern "C" cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int flags) {
  return api([&] { return graph_debug_dot_print(graph, path, flags); });
}

extern "C" cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return api([&] { return graph_instantiate(pGraphExec, graph, flags); });
}

extern "C" cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                     unsigned long long flags) {
  return api([&] { return graph_instantiate(pGraphExec, graph, flags); });
}

extern "C" cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams* instantiateParams) {
  return api([&]() -> cudaError_t {
    if (!instantiateParams) return cudaErrorInvalidValue;
    cudaError_t e = graph_instantiate_with_params(pGraphExec, graph, instantiateParams->flags,
                                                  instantiateParams->uploadStream);
    instantiateParams->errNode_out = nullptr;
    instantiateParams->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
    return e;
  });
}

extern "C" cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return api([&] { return graph_exec_destroy(graphExec); });
}

extern "C" cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return api([&] {
    MovedEventTimes::get().graph_launched();
    return graph_launch(graphExec, stream);
  });
}

extern "C" cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return api([&] { return graph_upload(graphExec, stream); });
}

extern "C" cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                           cudaGraphExecUpdateResultInfo* resultInfo) {
  return api([&] { return graph_exec_update(hGraphExec, hGraph, resultInfo); });
}

extern "C" cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaKernelNodeParams* pNodeParams) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) { return kernel_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaMemcpy3DParms* pNodeParams) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) { return copy3d_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void* dst,
                                                          const void* src, size_t count, cudaMemcpyKind kind) {
  return exec_set_with(hGraphExec, node,
                  [&](int d, GraphNodeParams* p) { return copy_node(d, dst, count, src, count, count, 1, kind, p); });
}

extern "C" cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                const void* symbol, const void* src, size_t count,
                                                                size_t offset, cudaMemcpyKind kind) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) {
    return symbol_copy_node(d, symbol, const_cast<void*>(src), count, offset, kind, true, p);
  });
}

extern "C" cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                  void* dst, const void* symbol, size_t count,
                                                                  size_t offset, cudaMemcpyKind kind) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) {
    return symbol_copy_node(d, symbol, dst, count, offset, kind, false, p);
  });
}

extern "C" cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const cudaMemsetParams* pNodeParams) {
  return exec_set_with(hGraphExec, node, [&](int, GraphNodeParams* p) { return memset_params(pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                      const cudaHostNodeParams* pNodeParams) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) { return host_params(d, pNodeParams, p); });
}

extern "C" cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                            cudaGraph_t childGraph) {
  return exec_set_with(hGraphExec, node, [&](int d, GraphNodeParams* p) { return child_node(d, childGraph, p); });
}

extern "C" cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                            cudaEvent_t event) {
  return exec_set_with(hGraphExec, hNode,
                  [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, event, p); });
}

extern "C" cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                          cudaEvent_t event) {
  return exec_set_with(hGraphExec, hNode,
                  [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, event, p); });
}

extern "C" cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int isEnabled) {
  return api([&] { return graph_node_set_enabled(hGraphExec, hNode, isEnabled); });
}

extern "C" cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int* isEnabled) {
  return api([&] { return graph_node_get_enabled(hGraphExec, hNode, isEnabled); });
}

extern "C" cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long* flags) {
  return api([&] { return graph_exec_get_flags(graphExec, flags); });
}

extern "C" cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                                cudaMemAllocNodeParams* nodeParams) {
  return api([&]() -> cudaError_t {
    if (!nodeParams) return cudaErrorInvalidValue;
    const auto& a = *nodeParams;
    return add_alloc(pGraphNode, graph, deps, n, nullptr, a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize,
                     &nodeParams->dptr);
  });
}

extern "C" cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, Deps deps, size_t n,
                                               void* dptr) {
  return add_with(pGraphNode, graph, deps, n, nullptr, [&](int d, GraphNodeParams* p) { return free_node(d, dptr, p); });
}

extern "C" cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, cudaMemAllocNodeParams* params_out) {
  return get_with(node, cudaGraphNodeTypeMemAlloc, params_out, [&](int d, const GraphNodeParams& p) {
    alloc_request(node, d, &params_out->poolProps, &params_out->accessDescs, &params_out->accessDescCount);
    params_out->bytesize = p.width;
    params_out->dptr = reinterpret_cast<void*>(p.dst);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
  return get_with(node, cudaGraphNodeTypeMemFree, dptr_out, [&](int, const GraphNodeParams& p) {
    *static_cast<void**>(dptr_out) = reinterpret_cast<void*>(p.dst);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                                       cudaKernelNodeAttrValue* value_out) {
  return api([&] { return kernel_node_get_attribute(hNode, attr, value_out); });
}

extern "C" cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                                       const cudaKernelNodeAttrValue* value) {
  return api([&] { return kernel_node_set_attribute(hNode, attr, value); });
}

extern "C" cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t hDst, cudaGraphNode_t hSrc) {
  return api([&] { return kernel_node_copy_attributes(hDst, hSrc); });
}

extern "C" cudaError_t cudaUserObjectCreate(cudaUserObject_t* object_out, void* ptr, cudaHostFn_t destroy,
                                            unsigned int initialRefcount, unsigned int flags) {
  return api([&] { return user_object_create(object_out, ptr, destroy, initialRefcount, flags); });
}

extern "C" cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  return api([&] { return user_object_retain(object, count, true); });
}

extern "C" cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return api([&] { return user_object_retain(object, count, false); });
}

extern "C" cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                 unsigned int flags) {
  return api([&] { return graph_user_object(graph, object, count, flags, true); });
}

extern "C" cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count) {
  return api([&] { return graph_user_object(graph, object, count, 0, false); });
}

extern "C" cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return api([&] { return device_graph_mem_attribute(device, attr, value, false); });
}

extern "C" cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return api([&] { return device_graph_mem_attribute(device, attr, value, true); });
}
