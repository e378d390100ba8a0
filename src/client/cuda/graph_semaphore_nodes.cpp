// External semaphore signal and wait nodes of the driver API, on the
// runtime's paths: the driver's node parameters are the runtime's, field for
// field (checked here; cuGraphAddNode's union holds the same structures).
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

template <typename Driver, typename Runtime>
constexpr bool same_layout() {
  return sizeof(Driver) == sizeof(Runtime) && offsetof(Driver, extSemArray) == offsetof(Runtime, extSemArray) &&
         offsetof(Driver, paramsArray) == offsetof(Runtime, paramsArray) &&
         offsetof(Driver, numExtSems) == offsetof(Runtime, numExtSems);
}
static_assert(same_layout<CUDA_EXT_SEM_SIGNAL_NODE_PARAMS, cudaExternalSemaphoreSignalNodeParams>());
static_assert(same_layout<CUDA_EXT_SEM_WAIT_NODE_PARAMS, cudaExternalSemaphoreWaitNodeParams>());
static_assert(same_layout<CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2, cudaExternalSemaphoreSignalNodeParamsV2>());
static_assert(same_layout<CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2, cudaExternalSemaphoreWaitNodeParamsV2>());

template <typename To, typename From>
To rt(From p) {
  return reinterpret_cast<To>(p);
}

using SignalParams = cudaExternalSemaphoreSignalNodeParams;
using WaitParams = cudaExternalSemaphoreWaitNodeParams;

}  // namespace

extern "C" CUresult CUDAAPI cuGraphAddExternalSemaphoresSignalNode(CUgraphNode* node, CUgraph graph,
                                                                   const CUgraphNode* deps, size_t n,
                                                                   const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphAddExternalSemaphoresSignalNode(rt<cudaGraphNode_t*>(node), rt<cudaGraph_t>(graph),
                                                    rt<const cudaGraphNode_t*>(deps), n,
                                                    rt<const SignalParams*>(params));
  });
}

extern "C" CUresult CUDAAPI cuGraphAddExternalSemaphoresWaitNode(CUgraphNode* node, CUgraph graph,
                                                                 const CUgraphNode* deps, size_t n,
                                                                 const CUDA_EXT_SEM_WAIT_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphAddExternalSemaphoresWaitNode(rt<cudaGraphNode_t*>(node), rt<cudaGraph_t>(graph),
                                                  rt<const cudaGraphNode_t*>(deps), n, rt<const WaitParams*>(params));
  });
}

extern "C" CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeGetParams(CUgraphNode node,
                                                                         CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* out) {
  return through_runtime([&] {
    return cudaGraphExternalSemaphoresSignalNodeGetParams(rt<cudaGraphNode_t>(node), rt<SignalParams*>(out));
  });
}

extern "C" CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeGetParams(CUgraphNode node,
                                                                       CUDA_EXT_SEM_WAIT_NODE_PARAMS* out) {
  return through_runtime([&] {
    return cudaGraphExternalSemaphoresWaitNodeGetParams(rt<cudaGraphNode_t>(node), rt<WaitParams*>(out));
  });
}

extern "C" CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeSetParams(
    CUgraphNode node, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphExternalSemaphoresSignalNodeSetParams(rt<cudaGraphNode_t>(node), rt<const SignalParams*>(params));
  });
}

extern "C" CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeSetParams(CUgraphNode node,
                                                                       const CUDA_EXT_SEM_WAIT_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphExternalSemaphoresWaitNodeSetParams(rt<cudaGraphNode_t>(node), rt<const WaitParams*>(params));
  });
}

extern "C" CUresult CUDAAPI cuGraphExecExternalSemaphoresSignalNodeSetParams(
    CUgraphExec exec, CUgraphNode node, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphExecExternalSemaphoresSignalNodeSetParams(rt<cudaGraphExec_t>(exec), rt<cudaGraphNode_t>(node),
                                                              rt<const SignalParams*>(params));
  });
}

extern "C" CUresult CUDAAPI cuGraphExecExternalSemaphoresWaitNodeSetParams(
    CUgraphExec exec, CUgraphNode node, const CUDA_EXT_SEM_WAIT_NODE_PARAMS* params) {
  return through_runtime([&] {
    return cudaGraphExecExternalSemaphoresWaitNodeSetParams(rt<cudaGraphExec_t>(exec), rt<cudaGraphNode_t>(node),
                                                            rt<const WaitParams*>(params));
  });
}
