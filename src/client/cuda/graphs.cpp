// CUDA graphs (driver API): the runtime's graph paths (CUgraph is
// cudaGraph_t, CUgraphNode cudaGraphNode_t), with the driver's structures
// converted here. A node's CUcontext is not looked at: contexts are the
// devices' primary ones and a graph lives on one device.
#include "client/cuda/cuda_api.hpp"

#include <cstring>
#include <mutex>
#include <set>

#include "client/graph/node_calls.hpp"
#include "client/graph/semaphore_nodes.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/graph_mem_op_nodes.hpp"
#include "client/cuda/kernel_launcher.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/primary_context.hpp"

using namespace rgpu::client;

// Kernel node attributes pass between the APIs as they are.
static_assert(sizeof(CUlaunchAttributeValue) == sizeof(cudaLaunchAttributeValue));
// So do memory pool properties and access descriptors.
static_assert(sizeof(CUmemPoolProps) == sizeof(cudaMemPoolProps));
static_assert(sizeof(CUmemAccessDesc) == sizeof(cudaMemAccessDesc));
// And the two versions of batch memory-operation parameters.
static_assert(sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS_v2) == sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS_v1));

namespace {

template <typename F>
CUresult driver(F&& f) {
  return through_runtime([&] { return api(f); });
}

cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaEvent_t rt(CUevent e) { return reinterpret_cast<cudaEvent_t>(e); }

template <typename Make>
CUresult add_with(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n, const CUgraphEdgeData* edges,
             Make&& make) {
  return driver(
      [&] { return add_made(node, graph, deps, n, reinterpret_cast<const cudaGraphEdgeData*>(edges), make); });
}

template <typename Make>
CUresult set_with(CUgraphNode node, Make&& make) {
  return driver([&] { return set_made(node, make); });
}

template <typename Make>
CUresult exec_set_with(CUgraphExec exec, CUgraphNode node, Make&& make) {
  return driver([&] { return exec_set_made(exec, node, make); });
}

template <typename Read>
CUresult get_with(CUgraphNode node, cudaGraphNodeType type, const void* out, Read&& read) {
  return driver([&] { return get_read(node, type, out, read); });
}

// A memory allocation node from the driver's structure; its address goes to a.dptr.
template <typename A>
cudaError_t add_alloc(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t n,
                      const CUgraphEdgeData* edges, A& a) {
  void* dptr = nullptr;
  cudaError_t e = rgpu::client::add_alloc(node, graph, deps, n, reinterpret_cast<const cudaGraphEdgeData*>(edges),
                                          reinterpret_cast<const cudaMemPoolProps&>(a.poolProps),
                                          reinterpret_cast<const cudaMemAccessDesc*>(a.accessDescs),
                                          a.accessDescCount, a.bytesize, &dptr);
  if (e == cudaSuccess) a.dptr = reinterpret_cast<CUdeviceptr>(dptr);
  return e;
}

// Any version of CUDA_KERNEL_NODE_PARAMS: they share their leading fields;
// v2 and v3 name a CUkernel in `kern` (with its context) when func is null.
template <typename K>
cudaError_t kernel_params(int device, const K* k, GraphNodeParams* p) {
  if (!k) return cudaErrorInvalidValue;
  const void* handle = k->func;
  if constexpr (requires { k->kern; }) {
    if (!handle) {
      handle = k->kern;
      if (context_or_current_device(k->ctx) != device) return cudaErrorInvalidValue;
    }
  }
  const LoadedKernel* lk;
  // A module's function on another device than the graph's: the driver's invalid value.
  if (cudaError_t e = resolve_kernel(handle, device, &lk))
    return e == cudaErrorDeviceUninitialized ? cudaErrorInvalidValue : e;
  return kernel_node(device, *lk, dim3(k->gridDimX, k->gridDimY, k->gridDimZ),
                     dim3(k->blockDimX, k->blockDimY, k->blockDimZ), k->sharedMemBytes, k->kernelParams, k->extra,
                     p);
}

// Kernel nodes last made or set with an `extra` buffer: their arguments read
// back as one, as NVIDIA's driver hands them back.
std::mutex g_extra_mutex;
std::set<CUgraphNode>& extra_nodes() {
  static auto* s = new std::set<CUgraphNode>;
  return *s;
}
CUresult note_extra(CUresult r, CUgraphNode node, void** extra) {
  if (r != CUDA_SUCCESS) return r;
  std::lock_guard lock(g_extra_mutex);
  if (extra)
    extra_nodes().insert(node);
  else
    extra_nodes().erase(node);
  return r;
}
bool made_with_extra(CUgraphNode node) {
  std::lock_guard lock(g_extra_mutex);
  return extra_nodes().count(node) != 0;
}

template <typename K>
cudaError_t read_kernel(CUgraphNode node, int device, const GraphNodeParams& p, K* k) {
  CUfunction f = DriverHandles::get().find_function(device, p.function);
  DriverFunction* fn = f ? DriverHandles::get().find(f) : nullptr;
  if (!fn) return cudaErrorInvalidDeviceFunction;
  *k = K{};
  k->func = f;
  // The kernel too, as NVIDIA's driver reports it (a CUkernel is its
  // CUfunction here): NVIDIA's runtime finds its kernel by it.
  if constexpr (requires { k->kern; }) {
    k->kern = reinterpret_cast<CUkernel>(f);
    k->ctx = primary_context(device);
  }
  k->gridDimX = p.grid.x, k->gridDimY = p.grid.y, k->gridDimZ = p.grid.z;
  k->blockDimX = p.block.x, k->blockDimY = p.block.y, k->blockDimZ = p.block.z;
  k->sharedMemBytes = p.shared_mem;
  if (made_with_extra(node))
    k->extra = node_kernel_extra(node, fn->kernel, p);
  else
    k->kernelParams = node_kernel_params(node, fn->kernel, p);
  return cudaSuccess;
}

// One side of a CUDA_MEMCPY3D.
CopyNodeSide side(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, size_t x, size_t y, size_t z,
                  size_t pitch, size_t height) {
  if (type == CU_MEMORYTYPE_ARRAY) return {nullptr, 0, 0, reinterpret_cast<cudaArray_const_t>(array), x, y, z};
  char* base = type == CU_MEMORYTYPE_HOST ? static_cast<char*>(const_cast<void*>(host)) : reinterpret_cast<char*>(device);
  return {base + (z * height + y) * pitch + x, pitch, height};
}

cudaError_t copy_params(int device, const CUDA_MEMCPY3D* m, GraphNodeParams* p) {
  if (!m) return cudaErrorInvalidValue;
  bool src_host = m->srcMemoryType == CU_MEMORYTYPE_HOST, dst_host = m->dstMemoryType == CU_MEMORYTYPE_HOST;
  bool unified = m->srcMemoryType == CU_MEMORYTYPE_UNIFIED || m->dstMemoryType == CU_MEMORYTYPE_UNIFIED;
  cudaMemcpyKind kind = src_host && dst_host ? cudaMemcpyHostToHost
                        : src_host           ? cudaMemcpyHostToDevice
                        : dst_host           ? cudaMemcpyDeviceToHost
                        : unified            ? cudaMemcpyDefault
                                             : cudaMemcpyDeviceToDevice;
  CopyNodeSide src = side(m->srcMemoryType, m->srcHost, m->srcDevice, m->srcArray, m->srcXInBytes, m->srcY, m->srcZ,
                          m->srcPitch, m->srcHeight);
  CopyNodeSide dst = side(m->dstMemoryType, m->dstHost, m->dstDevice, m->dstArray, m->dstXInBytes, m->dstY, m->dstZ,
                          m->dstPitch, m->dstHeight);
  return copy_box_node(device, dst, src, CopyBox{m->WidthInBytes, m->Height, m->Depth}, kind, p);
}

// One side of a copy node as CUDA_MEMCPY3D names it.
void read_side(int device, const GraphNodeParams& p, bool src, CUmemorytype* type, const void** host,
               CUdeviceptr* dptr, CUarray* array, size_t* x, size_t* y, size_t* z, size_t* pitch, size_t* height) {
  uint64_t remote = src ? p.src_array : p.dst_array;
  *pitch = src ? p.src_pitch : p.dst_pitch;
  *height = p.depth > 1 ? (src ? p.src_slice : p.dst_slice) : p.height;
  if (remote) {
    const rgpu::proto::ArrayPos& at = src ? p.src_at : p.dst_at;
    *type = CU_MEMORYTYPE_ARRAY;
    *array = reinterpret_cast<CUarray>(node_array(device, remote));
    *x = at.x, *y = at.y, *z = at.z;
    return;
  }
  uint64_t ptr = src ? p.src : p.dst;
  if (p.host_sides & (src ? rgpu::proto::kHostSrc : rgpu::proto::kHostDst)) {
    *type = CU_MEMORYTYPE_HOST;
    *host = reinterpret_cast<const void*>(ptr);
  } else {
    *type = CU_MEMORYTYPE_DEVICE;
    *dptr = ptr;
  }
}

CUDA_MEMCPY3D read_copy(int device, const GraphNodeParams& p) {
  CUDA_MEMCPY3D m{};
  read_side(device, p, true, &m.srcMemoryType, &m.srcHost, &m.srcDevice, &m.srcArray, &m.srcXInBytes, &m.srcY,
            &m.srcZ, &m.srcPitch, &m.srcHeight);
  const void* dst_host = nullptr;
  read_side(device, p, false, &m.dstMemoryType, &dst_host, &m.dstDevice, &m.dstArray, &m.dstXInBytes, &m.dstY,
            &m.dstZ, &m.dstPitch, &m.dstHeight);
  m.dstHost = const_cast<void*>(dst_host);
  m.Height = p.height;
  m.WidthInBytes = p.width;
  m.Depth = p.depth;
  return m;
}

template <typename M>
cudaError_t memset_params(const M* m, GraphNodeParams* p) {
  if (!m) return cudaErrorInvalidValue;
  return memset_node(reinterpret_cast<void*>(m->dst), m->pitch, m->value, m->elementSize, m->width, m->height, p);
}

template <typename H>
cudaError_t host_params(int device, const H* h, GraphNodeParams* p) {
  return h ? host_node(device, h->fn, h->userData, p) : cudaErrorInvalidValue;
}

cudaError_t generic_params(int device, const CUgraphNodeParams* g, GraphNodeParams* p) {
  if (!g) return cudaErrorInvalidValue;
  switch (g->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return kernel_params(device, &g->kernel, p);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      if (g->memcpy.flags) return cudaErrorInvalidValue;
      return copy_params(device, &g->memcpy.copyParams, p);
    case CU_GRAPH_NODE_TYPE_MEMSET: return memset_params(&g->memset, p);
    case CU_GRAPH_NODE_TYPE_HOST: return host_params(device, &g->host, p);
    case CU_GRAPH_NODE_TYPE_GRAPH:
      return child_node(device, g->graph.graph, p, g->graph.ownership);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return event_node(device, cudaGraphNodeTypeWaitEvent, rt(g->eventWait.event), p);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return event_node(device, cudaGraphNodeTypeEventRecord, rt(g->eventRecord.event), p);
    case CU_GRAPH_NODE_TYPE_EMPTY: p->type = cudaGraphNodeTypeEmpty; return cudaSuccess;
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return free_node(device, reinterpret_cast<void*>(g->free.dptr), p);
    // Laid out as the runtime's (graph_semaphore_nodes.cpp checks).
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
      return semaphore_node(device, cudaGraphNodeTypeExtSemaphoreSignal,
                            reinterpret_cast<const cudaExternalSemaphoreSignalNodeParamsV2*>(&g->extSemSignal), p);
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
      return semaphore_node(device, cudaGraphNodeTypeExtSemaphoreWait,
                            reinterpret_cast<const cudaExternalSemaphoreWaitNodeParamsV2*>(&g->extSemWait), p);
    // Conditional nodes keep their parameters (add_conditional makes them).
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return cudaErrorInvalidValue;
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
      return mem_op_node(device, reinterpret_cast<const CUDA_BATCH_MEM_OP_NODE_PARAMS*>(&g->memOp), p);
    default: return cudaErrorNotSupported;  // allocations (add_alloc)
  }
}

// A context given with a graph must be its device's (NULL: the current one).
cudaError_t graph_context(CUgraph graph, CUcontext ctx) {
  int device;
  if (cudaError_t e = graph_device(graph, &device)) return e;
  return context_or_current_device(ctx) == device ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

extern "C" CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return driver([&] { return graph_create(phGraph, flags); });
}

extern "C" CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  return driver([&] { return graph_destroy(hGraph); });
}

extern "C" CUresult CUDAAPI cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return driver([&] { return graph_clone(phGraphClone, originalGraph); });
}

extern "C" CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                 const CUgraphNode* dependencies, size_t numDependencies,
                                                 const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  CUresult r = add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
                        [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
  return note_extra(r, phGraphNode ? *phGraphNode : nullptr, nodeParams ? nodeParams->extra : nullptr);
}

extern "C" CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                    const CUgraphNode* dependencies, size_t numDependencies,
                                                    const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  CUresult r = add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
                        [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
  return note_extra(r, phGraphNode ? *phGraphNode : nullptr, nodeParams ? nodeParams->extra : nullptr);
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  return get_with(hNode, cudaGraphNodeTypeKernel, nodeParams,
             [&](int d, const GraphNodeParams& p) { return read_kernel(hNode, d, p, nodeParams); });
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return get_with(hNode, cudaGraphNodeTypeKernel, nodeParams,
             [&](int d, const GraphNodeParams& p) { return read_kernel(hNode, d, p, nodeParams); });
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  CUresult r = set_with(hNode, [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
  return note_extra(r, hNode, nodeParams ? nodeParams->extra : nullptr);
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  CUresult r = set_with(hNode, [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
  return note_extra(r, hNode, nodeParams ? nodeParams->extra : nullptr);
}

extern "C" CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                           const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                              const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return kernel_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                 const CUgraphNode* dependencies, size_t numDependencies,
                                                 const CUDA_MEMCPY3D* copyParams, CUcontext) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return copy_params(d, copyParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* nodeParams) {
  return get_with(hNode, cudaGraphNodeTypeMemcpy, nodeParams, [&](int d, const GraphNodeParams& p) {
    *nodeParams = read_copy(d, p);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) {
  return set_with(hNode, [&](int d, GraphNodeParams* p) { return copy_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                           const CUDA_MEMCPY3D* copyParams, CUcontext) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return copy_params(d, copyParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                 const CUgraphNode* dependencies, size_t numDependencies,
                                                 const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int, GraphNodeParams* p) { return memset_params(memsetParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return get_with(hNode, cudaGraphNodeTypeMemset, nodeParams, [&](int, const GraphNodeParams& p) {
    *nodeParams = CUDA_MEMSET_NODE_PARAMS{p.dst, p.dst_pitch, p.value, p.element_size, p.width, p.height};
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return set_with(hNode, [&](int, GraphNodeParams* p) { return memset_params(nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                           const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext) {
  return exec_set_with(hGraphExec, hNode, [&](int, GraphNodeParams* p) { return memset_params(memsetParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                               const CUgraphNode* dependencies, size_t numDependencies,
                                               const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return host_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams) {
  return get_with(hNode, cudaGraphNodeTypeHost, nodeParams, [&](int, const GraphNodeParams& p) {
    return node_host_function(p, &nodeParams->fn, &nodeParams->userData) ? cudaSuccess : cudaErrorInvalidValue;
  });
}

extern "C" CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return set_with(hNode, [&](int d, GraphNodeParams* p) { return host_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                         const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return host_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                const CUgraphNode* dependencies, size_t numDependencies) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr, [&](int, GraphNodeParams* p) {
    p->type = cudaGraphNodeTypeEmpty;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                     const CUgraphNode* dependencies, size_t numDependencies,
                                                     CUgraph childGraph) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return child_node(d, childGraph, p); });
}

extern "C" CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  return driver([&] { return child_graph_node_get_graph(hNode, phGraph); });
}

extern "C" CUresult CUDAAPI cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                               CUgraph childGraph) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return child_node(d, childGraph, p); });
}

extern "C" CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                      const CUgraphNode* dependencies, size_t numDependencies,
                                                      CUevent event) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                    const CUgraphNode* dependencies, size_t numDependencies,
                                                    CUevent event) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return get_with(hNode, cudaGraphNodeTypeEventRecord, event_out, [&](int d, const GraphNodeParams& p) {
    *event_out = reinterpret_cast<CUevent>(node_event(d, p));
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return set_with(hNode, [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return get_with(hNode, cudaGraphNodeTypeWaitEvent, event_out, [&](int d, const GraphNodeParams& p) {
    *event_out = reinterpret_cast<CUevent>(node_event(d, p));
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event) {
  return set_with(hNode, [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                               CUevent event) {
  return exec_set_with(hGraphExec, hNode,
                  [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeEventRecord, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                             CUevent event) {
  return exec_set_with(hGraphExec, hNode,
                  [&](int d, GraphNodeParams* p) { return event_node(d, cudaGraphNodeTypeWaitEvent, rt(event), p); });
}

extern "C" CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph,
                                              const CUgraphNode* dependencies, const CUgraphEdgeData* dependencyData,
                                              size_t numDependencies, CUgraphNodeParams* nodeParams) {
  if (nodeParams && nodeParams->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
    return driver(
        [&] { return add_alloc(phGraphNode, hGraph, dependencies, numDependencies, dependencyData, nodeParams->alloc); });
  if (nodeParams && nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
    return driver([&]() -> cudaError_t {
      auto& c = nodeParams->conditional;
      if (cudaError_t e = graph_context(hGraph, c.ctx)) return e;
      return add_conditional(phGraphNode, hGraph, dependencies, numDependencies,
                             reinterpret_cast<const cudaGraphEdgeData*>(dependencyData), c.type, c.size, c.handle,
                             &c.phGraph_out);
    });
  CUresult r = add_with(phGraphNode, hGraph, dependencies, numDependencies, dependencyData,
                        [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
  return nodeParams && nodeParams->type == CU_GRAPH_NODE_TYPE_KERNEL
             ? note_extra(r, phGraphNode ? *phGraphNode : nullptr, nodeParams->kernel.extra)
             : r;
}

extern "C" CUresult CUDAAPI cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                           size_t numDependencies, CUgraphNodeParams* nodeParams) {
  return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams);
}

extern "C" CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph,
                                                            CUcontext ctx, unsigned int defaultLaunchValue,
                                                            unsigned int flags) {
  return driver([&]() -> cudaError_t {
    if (cudaError_t e = graph_context(hGraph, ctx)) return e;
    static_assert(sizeof(CUgraphConditionalHandle) == sizeof(cudaGraphConditionalHandle));
    return graph_conditional_handle_create(reinterpret_cast<cudaGraphConditionalHandle*>(pHandle_out), hGraph,
                                           defaultLaunchValue, flags);
  });
}

extern "C" CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  CUresult r = set_with(hNode, [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
  return nodeParams && nodeParams->type == CU_GRAPH_NODE_TYPE_KERNEL ? note_extra(r, hNode, nodeParams->kernel.extra)
                                                                    : r;
}

extern "C" CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     CUgraphNodeParams* nodeParams) {
  return exec_set_with(hGraphExec, hNode, [&](int d, GraphNodeParams* p) { return generic_params(d, nodeParams, p); });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return driver([&] { return node_get_type(hNode, reinterpret_cast<cudaGraphNodeType*>(type)); });
}

extern "C" CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode) {
  return driver([&] { return graph_destroy_node(hNode); });
}

extern "C" CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  return driver([&] { return graph_get_nodes(hGraph, nodes, numNodes, false); });
}

extern "C" CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes) {
  return driver([&] { return graph_get_nodes(hGraph, rootNodes, numRootNodes, true); });
}

extern "C" CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* numEdges) {
  return driver([&] { return graph_get_edges(hGraph, from, to, nullptr, numEdges); });
}

extern "C" CUresult CUDAAPI cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to,
                                               CUgraphEdgeData* edgeData, size_t* numEdges) {
  return driver(
      [&] { return graph_get_edges(hGraph, from, to, reinterpret_cast<cudaGraphEdgeData*>(edgeData), numEdges); });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies,
                                                       size_t* numDependencies) {
  return driver([&] { return node_neighbours(hNode, dependencies, nullptr, numDependencies, false); });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies,
                                                          CUgraphEdgeData* edgeData, size_t* numDependencies) {
  return driver([&] {
    return node_neighbours(hNode, dependencies, reinterpret_cast<cudaGraphEdgeData*>(edgeData), numDependencies,
                           false);
  });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                                         size_t* numDependentNodes) {
  return driver([&] { return node_neighbours(hNode, dependentNodes, nullptr, numDependentNodes, true); });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                                            CUgraphEdgeData* edgeData, size_t* numDependentNodes) {
  return driver([&] {
    return node_neighbours(hNode, dependentNodes, reinterpret_cast<cudaGraphEdgeData*>(edgeData), numDependentNodes,
                           true);
  });
}

extern "C" CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                                   size_t numDependencies) {
  return driver([&] { return graph_change_dependencies(hGraph, from, to, nullptr, numDependencies, true); });
}

extern "C" CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                                      const CUgraphEdgeData* edgeData, size_t numDependencies) {
  return driver([&] {
    return graph_change_dependencies(hGraph, from, to, reinterpret_cast<const cudaGraphEdgeData*>(edgeData),
                                     numDependencies, true);
  });
}

extern "C" CUresult CUDAAPI cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                                      size_t numDependencies) {
  return driver([&] { return graph_change_dependencies(hGraph, from, to, nullptr, numDependencies, false); });
}

extern "C" CUresult CUDAAPI cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode* from,
                                                         const CUgraphNode* to, const CUgraphEdgeData* edgeData,
                                                         size_t numDependencies) {
  return driver([&] {
    return graph_change_dependencies(hGraph, from, to, reinterpret_cast<const cudaGraphEdgeData*>(edgeData),
                                     numDependencies, false);
  });
}

extern "C" CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode,
                                                   CUgraph hClonedGraph) {
  return driver([&] { return node_find_in_clone(phNode, hOriginalNode, hClonedGraph); });
}

extern "C" CUresult CUDAAPI cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  return driver([&] { return graph_debug_dot_print(hGraph, path, flags); });
}

extern "C" CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                        unsigned long long flags) {
  return driver([&] { return graph_instantiate(phGraphExec, hGraph, flags); });
}

// The bindings from before instantiation flags: no error node to name and
// no log to write.
extern "C" CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                               char* logBuffer, size_t bufferSize) {
  if (phErrorNode) *phErrorNode = nullptr;
  if (logBuffer && bufferSize) logBuffer[0] = '\0';
  return driver([&] { return graph_instantiate(phGraphExec, hGraph, 0); });
}

extern "C" CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                                  char* logBuffer, size_t bufferSize) {
  return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

extern "C" CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                         CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return driver([&]() -> cudaError_t {
    if (!instantiateParams) return cudaErrorInvalidValue;
    cudaError_t e = graph_instantiate_with_params(phGraphExec, hGraph, instantiateParams->flags,
                                                  rt(instantiateParams->hUploadStream));
    instantiateParams->hErrNode_out = nullptr;
    instantiateParams->result_out = e == cudaSuccess ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return e;
  });
}

extern "C" CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return driver([&] { return graph_exec_destroy(hGraphExec); });
}

extern "C" CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return driver([&] { return graph_launch(hGraphExec, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  return driver([&] { return graph_upload(hGraphExec, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                                              CUgraphExecUpdateResult* updateResult_out) {
  if (!hErrorNode_out || !updateResult_out) return CUDA_ERROR_INVALID_VALUE;
  cudaGraphExecUpdateResultInfo info{};
  CUresult r = driver([&] { return graph_exec_update(hGraphExec, hGraph, &info); });
  *hErrorNode_out = info.errorNode;
  *updateResult_out = static_cast<CUgraphExecUpdateResult>(info.result);
  return r;
}

extern "C" CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                                 CUgraphExecUpdateResultInfo* resultInfo) {
  return driver([&] {
    return graph_exec_update(hGraphExec, hGraph, reinterpret_cast<cudaGraphExecUpdateResultInfo*>(resultInfo));
  });
}

extern "C" CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  return driver([&] { return graph_exec_get_flags(hGraphExec, reinterpret_cast<unsigned long long*>(flags)); });
}

extern "C" CUresult CUDAAPI cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
  return driver([&] { return graph_node_set_enabled(hGraphExec, hNode, isEnabled); });
}

extern "C" CUresult CUDAAPI cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled) {
  return driver([&] { return graph_node_get_enabled(hGraphExec, hNode, isEnabled); });
}

extern "C" CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                   const CUgraphNode* dependencies, size_t numDependencies,
                                                   CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  return driver([&]() -> cudaError_t {
    if (!nodeParams) return cudaErrorInvalidValue;
    return add_alloc(phGraphNode, hGraph, dependencies, numDependencies, nullptr, *nodeParams);
  });
}

extern "C" CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                  const CUgraphNode* dependencies, size_t numDependencies,
                                                  CUdeviceptr dptr) {
  return add_with(phGraphNode, hGraph, dependencies, numDependencies, nullptr,
             [&](int d, GraphNodeParams* p) { return free_node(d, reinterpret_cast<void*>(dptr), p); });
}

extern "C" CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  return get_with(hNode, cudaGraphNodeTypeMemAlloc, params_out, [&](int d, const GraphNodeParams& p) {
    alloc_request(hNode, d, reinterpret_cast<cudaMemPoolProps*>(&params_out->poolProps),
                  reinterpret_cast<const cudaMemAccessDesc**>(&params_out->accessDescs), &params_out->accessDescCount);
    params_out->bytesize = p.width;
    params_out->dptr = p.dst;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return get_with(hNode, cudaGraphNodeTypeMemFree, dptr_out, [&](int, const GraphNodeParams& p) {
    *dptr_out = p.dst;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                          CUkernelNodeAttrValue* value_out) {
  return driver([&] {
    return kernel_node_get_attribute(hNode, static_cast<cudaLaunchAttributeID>(attr),
                                     reinterpret_cast<cudaLaunchAttributeValue*>(value_out));
  });
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                          const CUkernelNodeAttrValue* value) {
  return driver([&] {
    return kernel_node_set_attribute(hNode, static_cast<cudaLaunchAttributeID>(attr),
                                     reinterpret_cast<const cudaLaunchAttributeValue*>(value));
  });
}

extern "C" CUresult CUDAAPI cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  return driver([&] { return kernel_node_copy_attributes(dst, src); });
}

extern "C" CUresult CUDAAPI cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy,
                                               unsigned int initialRefcount, unsigned int flags) {
  return driver([&] { return user_object_create(object_out, ptr, destroy, initialRefcount, flags); });
}

extern "C" CUresult CUDAAPI cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return driver([&] { return user_object_retain(object, count, true); });
}

extern "C" CUresult CUDAAPI cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return driver([&] { return user_object_retain(object, count, false); });
}

extern "C" CUresult CUDAAPI cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                                    unsigned int flags) {
  return driver([&] { return graph_user_object(graph, object, count, flags, true); });
}

extern "C" CUresult CUDAAPI cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  return driver([&] { return graph_user_object(graph, object, count, 0, false); });
}

extern "C" CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  return driver(
      [&] { return device_graph_mem_attribute(device, static_cast<cudaGraphMemAttributeType>(attr), value, false); });
}

extern "C" CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  return driver(
      [&] { return device_graph_mem_attribute(device, static_cast<cudaGraphMemAttributeType>(attr), value, true); });
}

extern "C" CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device) {
  return driver([&] { return cudaDeviceGraphMemTrim(device); });
}
