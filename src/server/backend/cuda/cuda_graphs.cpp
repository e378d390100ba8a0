#include "server/backend/cuda/cuda_graphs.hpp"

#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "server/backend/cuda/cuda_arrays.hpp"
#include "server/backend/cuda/cuda_semaphore_params.hpp"
#include "server/backend/graph_array_copy.hpp"

namespace rgpu::server {
namespace {

template <typename T>
T as(uint64_t h) {
  return reinterpret_cast<T>(h);
}
template <typename T>
uint64_t handle(T p) {
  return reinterpret_cast<uint64_t>(p);
}
int32_t rt(CUresult r) { return static_cast<int32_t>(r); }

std::vector<cudaGraphNode_t> node_list(std::span<const uint64_t> handles) {
  std::vector<cudaGraphNode_t> out;
  for (uint64_t h : handles) out.push_back(as<cudaGraphNode_t>(h));
  return out;
}

// The worker's host-node runner: every host node calls it with its record.
HostNodeRunner g_host_node_runner = nullptr;
void run_host_node(void* record) { g_host_node_runner(reinterpret_cast<uint64_t>(record)); }

// A kernel node's arguments as the driver takes them: one pointer per
// parameter, into the packed buffer at the offsets cuFuncGetParamInfo gives.
struct KernelArgs {
  std::vector<uint8_t> packed;
  std::vector<void*> pointers;
};

int32_t kernel_params(const GraphNodeParams& p, KernelArgs* args, CUDA_KERNEL_NODE_PARAMS* k) {
  args->packed = p.args;
  CUfunction f = as<CUfunction>(p.function);
  for (size_t i = 0;; ++i) {
    size_t offset, size;
    if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
    if (offset + size > args->packed.size()) return cudaErrorInvalidValue;
    args->pointers.push_back(args->packed.data() + offset);
  }
  *k = CUDA_KERNEL_NODE_PARAMS{};
  k->func = f;
  k->gridDimX = p.grid.x, k->gridDimY = p.grid.y, k->gridDimZ = p.grid.z;
  k->blockDimX = p.block.x, k->blockDimY = p.block.y, k->blockDimZ = p.block.z;
  k->sharedMemBytes = p.shared_mem;
  k->kernelParams = args->pointers.empty() ? nullptr : args->pointers.data();
  return cudaSuccess;
}

// A node whose arguments came as one buffer (`extra`, as the worker's own
// launches pass them): the buffer, up to the parameters' size.
void copy_extra(void** extra, std::vector<uint8_t>* args) {
  const void* buffer = nullptr;
  size_t size = 0;
  for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<const size_t*>(extra[i + 1]);
  }
  if (buffer) std::memcpy(args->data(), buffer, std::min(size, args->size()));
}

// A batch memory-operation node's parameters, its operations held in *ops;
// the node's context is the worker's current one.
int32_t mem_op_params(const GraphNodeParams& p, std::vector<CUstreamBatchMemOpParams>* ops,
                      CUDA_BATCH_MEM_OP_NODE_PARAMS* m) {
  for (const auto& w : proto::node_mem_ops(p)) ops->push_back(proto::to_cu_mem_op(w));
  CUcontext ctx = nullptr;
  if (CUresult r = cuCtxGetCurrent(&ctx)) return rt(r);
  *m = CUDA_BATCH_MEM_OP_NODE_PARAMS{ctx, static_cast<unsigned>(ops->size()), ops->data(), p.value};
  return cudaSuccess;
}

// A copy node with an array side (an array the driver no longer knows
// leaves element 1: CUDA's call with it reports the bad array).
cudaMemcpy3DParms array_memcpy_params(const GraphNodeParams& p) {
  size_t element = 1;
  array_element_size(p.dst_array ? p.dst_array : p.src_array, &element);
  ArrayCopy c = array_copy_of(p, element);
  cudaMemcpy3DParms m{};
  if (copy_3d_parms(c.dst, c.src, c.extent, proto::copy_kind(p), &m)) m.extent = c.extent;
  return m;
}

cudaMemcpy3DParms memcpy_params(const GraphNodeParams& p) {
  if (proto::copies_array(p)) return array_memcpy_params(p);
  cudaMemcpy3DParms m{};
  // Slices of a 3-D copy are ysize rows apart on each side.
  m.dstPtr = cudaPitchedPtr{as<void*>(p.dst), p.dst_pitch, p.width, p.depth > 1 ? p.dst_slice : p.height};
  m.srcPtr = cudaPitchedPtr{as<void*>(p.src), p.src_pitch, p.width, p.depth > 1 ? p.src_slice : p.height};
  m.extent = cudaExtent{p.width, p.height, p.depth};
  // Host sides are the worker's page-locked mapping of the client's memory.
  m.kind = proto::copy_kind(p);
  return m;
}

cudaMemsetParams memset_params(const GraphNodeParams& p) {
  cudaMemsetParams m{};
  m.dst = as<void*>(p.dst);
  m.pitch = p.dst_pitch;
  m.value = p.value;
  m.elementSize = p.element_size;
  m.width = p.width;
  m.height = p.height;
  return m;
}

cudaHostNodeParams host_params(const GraphNodeParams& p) {
  return cudaHostNodeParams{run_host_node, as<void*>(p.handle)};
}

int32_t get_list(cudaError_t (*fn)(cudaGraph_t, cudaGraphNode_t*, size_t*), uint64_t graph,
                 std::vector<uint64_t>* out) {
  size_t n = 0;
  if (cudaError_t e = fn(as<cudaGraph_t>(graph), nullptr, &n)) return e;
  std::vector<cudaGraphNode_t> nodes(n);
  if (cudaError_t e = fn(as<cudaGraph_t>(graph), nodes.data(), &n)) return e;
  for (size_t i = 0; i < n; ++i) out->push_back(handle(nodes[i]));
  return cudaSuccess;
}

int32_t get_neighbours(cudaError_t (*fn)(cudaGraphNode_t, cudaGraphNode_t*, cudaGraphEdgeData*, size_t*),
                       uint64_t node, std::vector<uint64_t>* out) {
  size_t n = 0;
  if (cudaError_t e = fn(as<cudaGraphNode_t>(node), nullptr, nullptr, &n)) return e;
  std::vector<cudaGraphNode_t> nodes(n);
  if (cudaError_t e = fn(as<cudaGraphNode_t>(node), nodes.data(), nullptr, &n)) return e;
  for (size_t i = 0; i < n; ++i) out->push_back(handle(nodes[i]));
  return cudaSuccess;
}

}  // namespace

bool CudaGraphs::capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

int32_t CudaGraphs::capture_refused(cudaStream_t stream) {
  // Querying a capturing stream is illegal in CUDA and invalidates its
  // capture, so the application's cudaStreamEndCapture reports it.
  cudaStreamQuery(stream);
  return cudaErrorStreamCaptureUnsupported;
}

int32_t CudaGraphs::graph_create(uint64_t* graph) {
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaGraphCreate(&g, 0);
  *graph = handle(g);
  return e;
}

int32_t CudaGraphs::graph_destroy(uint64_t graph) { return cudaGraphDestroy(as<cudaGraph_t>(graph)); }

int32_t CudaGraphs::graph_clone(uint64_t* clone, uint64_t graph) {
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaGraphClone(&g, as<cudaGraph_t>(graph));
  *clone = handle(g);
  return e;
}

int32_t CudaGraphs::add_node(uint64_t* node, uint64_t graph, std::span<const uint64_t> deps,
                             const GraphNodeParams& p) {
  cudaGraph_t g = as<cudaGraph_t>(graph);
  auto d = node_list(deps);
  cudaGraphNode_t n = nullptr;
  int32_t e = cudaErrorNotSupported;
  switch (p.type) {
    case cudaGraphNodeTypeKernel: {
      KernelArgs args;
      CUDA_KERNEL_NODE_PARAMS k;
      if ((e = kernel_params(p, &args, &k))) return e;
      e = rt(cuGraphAddKernelNode(reinterpret_cast<CUgraphNode*>(&n), g, reinterpret_cast<CUgraphNode*>(d.data()),
                                  d.size(), &k));
      break;
    }
    case cudaGraphNodeTypeMemcpy: {
      auto m = memcpy_params(p);
      e = cudaGraphAddMemcpyNode(&n, g, d.data(), d.size(), &m);
      break;
    }
    case cudaGraphNodeTypeMemset: {
      auto m = memset_params(p);
      e = cudaGraphAddMemsetNode(&n, g, d.data(), d.size(), &m);
      break;
    }
    case cudaGraphNodeTypeEmpty: e = cudaGraphAddEmptyNode(&n, g, d.data(), d.size()); break;
    case cudaGraphNodeTypeGraph:
      if (p.value == cudaGraphChildGraphOwnershipMove) {
        cudaGraphNodeParams child{};
        child.type = cudaGraphNodeTypeGraph;
        child.graph.graph = as<cudaGraph_t>(p.handle);
        child.graph.ownership = cudaGraphChildGraphOwnershipMove;
        e = cudaGraphAddNode(&n, g, d.data(), nullptr, d.size(), &child);
      } else {
        e = cudaGraphAddChildGraphNode(&n, g, d.data(), d.size(), as<cudaGraph_t>(p.handle));
      }
      break;
    case cudaGraphNodeTypeEventRecord:
      e = cudaGraphAddEventRecordNode(&n, g, d.data(), d.size(), as<cudaEvent_t>(p.handle));
      break;
    case cudaGraphNodeTypeWaitEvent:
      e = cudaGraphAddEventWaitNode(&n, g, d.data(), d.size(), as<cudaEvent_t>(p.handle));
      break;
    case cudaGraphNodeTypeHost: {
      g_host_node_runner = host_node_runner_;
      auto h = host_params(p);
      e = cudaGraphAddHostNode(&n, g, d.data(), d.size(), &h);
      break;
    }
    case cudaGraphNodeTypeMemAlloc: {
      cudaMemAllocNodeParams m{};
      m.poolProps.allocType = cudaMemAllocationTypePinned;
      m.poolProps.location = cudaMemLocation{cudaMemLocationTypeDevice, static_cast<int>(p.value)};
      m.bytesize = p.width;
      e = cudaGraphAddMemAllocNode(&n, g, d.data(), d.size(), &m);
      break;
    }
    case cudaGraphNodeTypeMemFree: e = cudaGraphAddMemFreeNode(&n, g, d.data(), d.size(), as<void*>(p.dst)); break;
    case cudaGraphNodeTypeExtSemaphoreSignal: {
      SignalArrays a(p.semaphores);
      auto s = a.node<cudaExternalSemaphoreSignalNodeParams>();
      e = cudaGraphAddExternalSemaphoresSignalNode(&n, g, d.data(), d.size(), &s);
      break;
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
      WaitArrays a(p.semaphores);
      auto w = a.node<cudaExternalSemaphoreWaitNodeParams>();
      e = cudaGraphAddExternalSemaphoresWaitNode(&n, g, d.data(), d.size(), &w);
      break;
    }
    case cudaGraphNodeTypeConditional: {
      cudaGraphNodeParams c{};
      c.type = cudaGraphNodeTypeConditional;
      c.conditional.handle = p.handle;
      c.conditional.type = static_cast<cudaGraphConditionalNodeType>(p.value);
      c.conditional.size = static_cast<unsigned>(p.width);
      if ((e = cudaGraphAddNode(&n, g, d.data(), nullptr, d.size(), &c))) break;
      // CUDA points phGraph_out at its own array of the bodies.
      GraphNodeParams made = p;
      made.bodies.clear();
      for (unsigned i = 0; i < c.conditional.size; ++i) made.bodies.push_back(handle(c.conditional.phGraph_out[i]));
      std::lock_guard lock(conditionals_mutex_);
      conditionals_[handle(n)] = std::move(made);
      break;
    }
    case proto::kGraphNodeTypeBatchMemOp: {
      std::vector<CUstreamBatchMemOpParams> ops;
      CUDA_BATCH_MEM_OP_NODE_PARAMS m;
      if ((e = mem_op_params(p, &ops, &m))) return e;
      e = rt(cuGraphAddBatchMemOpNode(reinterpret_cast<CUgraphNode*>(&n), reinterpret_cast<CUgraph>(g),
                                      reinterpret_cast<CUgraphNode*>(d.data()), d.size(), &m));
      break;
    }
    default: break;
  }
  *node = handle(n);
  return e;
}

int32_t CudaGraphs::node_params(uint64_t node, GraphNodeParams* p) {
  cudaGraphNode_t n = as<cudaGraphNode_t>(node);
  int32_t type;
  if (int32_t e = node_type(node, &type)) return e;
  p->type = type;
  switch (type) {
    case cudaGraphNodeTypeKernel: {
      CUDA_KERNEL_NODE_PARAMS k{};
      if (CUresult r = cuGraphKernelNodeGetParams(reinterpret_cast<CUgraphNode>(n), &k)) return rt(r);
      p->function = handle(k.func);
      p->grid = dim3(k.gridDimX, k.gridDimY, k.gridDimZ);
      p->block = dim3(k.blockDimX, k.blockDimY, k.blockDimZ);
      p->shared_mem = k.sharedMemBytes;
      for (size_t i = 0;; ++i) {
        size_t offset, size;
        if (cuFuncGetParamInfo(k.func, i, &offset, &size) != CUDA_SUCCESS) break;
        if (p->args.size() < offset + size) p->args.resize(offset + size);
        if (k.kernelParams) std::memcpy(p->args.data() + offset, k.kernelParams[i], size);
      }
      if (!k.kernelParams && k.extra) copy_extra(k.extra, &p->args);
      return cudaSuccess;
    }
    case cudaGraphNodeTypeMemcpy: {
      cudaMemcpy3DParms m{};
      if (cudaError_t e = cudaGraphMemcpyNodeGetParams(n, &m)) return e;
      // With an array taking part, x positions and the width count its elements.
      size_t element = 1;
      if (m.srcArray || m.dstArray)
        if (int32_t e = array_element_size(handle(m.dstArray ? m.dstArray : m.srcArray), &element)) return e;
      // An array side by its position, a memory side by its first byte.
      auto side = [&](cudaArray_t array, const cudaPitchedPtr& ptr, const cudaPos& pos, uint64_t* address,
                      uint64_t* array_out, proto::ArrayPos* at) {
        *array_out = handle(array);
        if (array)
          *at = {pos.x * element, pos.y, pos.z};
        else
          *address = handle(ptr.ptr) + (pos.z * ptr.ysize + pos.y) * ptr.pitch + pos.x * element;
      };
      side(m.dstArray, m.dstPtr, m.dstPos, &p->dst, &p->dst_array, &p->dst_at);
      side(m.srcArray, m.srcPtr, m.srcPos, &p->src, &p->src_array, &p->src_at);
      p->dst_pitch = m.dstPtr.pitch;
      p->src_pitch = m.srcPtr.pitch;
      p->width = m.extent.width * element;
      p->height = m.extent.height;
      p->depth = m.extent.depth;
      p->dst_slice = m.dstPtr.ysize;
      p->src_slice = m.srcPtr.ysize;
      return cudaSuccess;
    }
    case cudaGraphNodeTypeMemset: {
      cudaMemsetParams m{};
      if (cudaError_t e = cudaGraphMemsetNodeGetParams(n, &m)) return e;
      p->dst = handle(m.dst);
      p->dst_pitch = m.pitch;
      p->value = m.value;
      p->element_size = m.elementSize;
      p->width = m.width;
      p->height = m.height;
      return cudaSuccess;
    }
    case cudaGraphNodeTypeGraph: {
      cudaGraph_t g;
      cudaError_t e = cudaGraphChildGraphNodeGetGraph(n, &g);
      p->handle = handle(g);
      return e;
    }
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent: {
      cudaEvent_t ev;
      cudaError_t e = type == cudaGraphNodeTypeEventRecord ? cudaGraphEventRecordNodeGetEvent(n, &ev)
                                                           : cudaGraphEventWaitNodeGetEvent(n, &ev);
      p->handle = handle(ev);
      return e;
    }
    case cudaGraphNodeTypeHost: {
      cudaHostNodeParams h{};
      cudaError_t e = cudaGraphHostNodeGetParams(n, &h);
      p->handle = handle(h.userData);
      return e;
    }
    case cudaGraphNodeTypeMemAlloc: {
      cudaMemAllocNodeParams m{};
      cudaError_t e = cudaGraphMemAllocNodeGetParams(n, &m);
      p->dst = handle(m.dptr);
      p->width = m.bytesize;
      p->value = static_cast<uint32_t>(m.poolProps.location.id);
      return e;
    }
    case cudaGraphNodeTypeMemFree: {
      void* dptr = nullptr;
      cudaError_t e = cudaGraphMemFreeNodeGetParams(n, &dptr);
      p->dst = handle(dptr);
      return e;
    }
    case cudaGraphNodeTypeExtSemaphoreSignal: {
      cudaExternalSemaphoreSignalNodeParams s{};
      cudaError_t e = cudaGraphExternalSemaphoresSignalNodeGetParams(n, &s);
      if (e == cudaSuccess) p->semaphores = semaphore_ops(s);
      return e;
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
      cudaExternalSemaphoreWaitNodeParams w{};
      cudaError_t e = cudaGraphExternalSemaphoresWaitNodeGetParams(n, &w);
      if (e == cudaSuccess) p->semaphores = semaphore_ops(w);
      return e;
    }
    case cudaGraphNodeTypeEmpty: return cudaSuccess;
    case cudaGraphNodeTypeConditional: {
      std::lock_guard lock(conditionals_mutex_);
      auto it = conditionals_.find(node);
      // One listed from a clone: CUDA tells nothing of its parameters.
      if (it == conditionals_.end()) return cudaErrorNotSupported;
      *p = it->second;
      return cudaSuccess;
    }
    case proto::kGraphNodeTypeBatchMemOp: {
      CUDA_BATCH_MEM_OP_NODE_PARAMS m{};
      if (CUresult r = cuGraphBatchMemOpNodeGetParams(reinterpret_cast<CUgraphNode>(n), &m)) return rt(r);
      proto::Writer w;
      for (unsigned i = 0; i < m.count; ++i) w.put(proto::from_cu_mem_op(m.paramArray[i]));
      p->args = w.bytes();
      p->value = m.flags;
      return cudaSuccess;
    }
    default: return cudaErrorNotSupported;
  }
}

int32_t CudaGraphs::set_node_params(uint64_t node, const GraphNodeParams& p) {
  cudaGraphNode_t n = as<cudaGraphNode_t>(node);
  int32_t type;
  if (int32_t e = node_type(node, &type)) return e;
  if (type != p.type) return cudaErrorInvalidValue;
  switch (type) {
    case cudaGraphNodeTypeKernel: {
      KernelArgs args;
      CUDA_KERNEL_NODE_PARAMS k;
      if (int32_t e = kernel_params(p, &args, &k)) return e;
      return rt(cuGraphKernelNodeSetParams(reinterpret_cast<CUgraphNode>(n), &k));
    }
    case cudaGraphNodeTypeMemcpy: {
      auto m = memcpy_params(p);
      return cudaGraphMemcpyNodeSetParams(n, &m);
    }
    case cudaGraphNodeTypeMemset: {
      auto m = memset_params(p);
      return cudaGraphMemsetNodeSetParams(n, &m);
    }
    case cudaGraphNodeTypeEventRecord: return cudaGraphEventRecordNodeSetEvent(n, as<cudaEvent_t>(p.handle));
    case cudaGraphNodeTypeWaitEvent: return cudaGraphEventWaitNodeSetEvent(n, as<cudaEvent_t>(p.handle));
    case cudaGraphNodeTypeHost: {
      auto h = host_params(p);
      return cudaGraphHostNodeSetParams(n, &h);
    }
    case cudaGraphNodeTypeExtSemaphoreSignal: {
      SignalArrays a(p.semaphores);
      auto s = a.node<cudaExternalSemaphoreSignalNodeParams>();
      return cudaGraphExternalSemaphoresSignalNodeSetParams(n, &s);
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
      WaitArrays a(p.semaphores);
      auto w = a.node<cudaExternalSemaphoreWaitNodeParams>();
      return cudaGraphExternalSemaphoresWaitNodeSetParams(n, &w);
    }
    case proto::kGraphNodeTypeBatchMemOp: {
      std::vector<CUstreamBatchMemOpParams> ops;
      CUDA_BATCH_MEM_OP_NODE_PARAMS m;
      if (int32_t e = mem_op_params(p, &ops, &m)) return e;
      return rt(cuGraphBatchMemOpNodeSetParams(reinterpret_cast<CUgraphNode>(n), &m));
    }
    default: return cudaErrorInvalidValue;
  }
}

// The driver's call: the runtime's answers cudaErrorUnknown for node types
// its enum lacks (batch memory operations).
int32_t CudaGraphs::node_type(uint64_t node, int32_t* type) {
  CUgraphNodeType t;
  int32_t e = rt(cuGraphNodeGetType(as<CUgraphNode>(node), &t));
  *type = t;
  return e;
}

int32_t CudaGraphs::destroy_node(uint64_t node) {
  {
    std::lock_guard lock(conditionals_mutex_);
    conditionals_.erase(node);
  }
  return cudaGraphDestroyNode(as<cudaGraphNode_t>(node));
}

int32_t CudaGraphs::nodes(uint64_t graph, std::vector<uint64_t>* out) { return get_list(cudaGraphGetNodes, graph, out); }

int32_t CudaGraphs::root_nodes(uint64_t graph, std::vector<uint64_t>* out) {
  return get_list(cudaGraphGetRootNodes, graph, out);
}

int32_t CudaGraphs::edges(uint64_t graph, std::vector<uint64_t>* from, std::vector<uint64_t>* to) {
  size_t n = 0;
  if (cudaError_t e = cudaGraphGetEdges(as<cudaGraph_t>(graph), nullptr, nullptr, nullptr, &n)) return e;
  std::vector<cudaGraphNode_t> f(n), t(n);
  if (cudaError_t e = cudaGraphGetEdges(as<cudaGraph_t>(graph), f.data(), t.data(), nullptr, &n)) return e;
  for (size_t i = 0; i < n; ++i) {
    from->push_back(handle(f[i]));
    to->push_back(handle(t[i]));
  }
  return cudaSuccess;
}

int32_t CudaGraphs::dependencies(uint64_t node, std::vector<uint64_t>* out) {
  return get_neighbours(cudaGraphNodeGetDependencies, node, out);
}

int32_t CudaGraphs::dependents(uint64_t node, std::vector<uint64_t>* out) {
  return get_neighbours(cudaGraphNodeGetDependentNodes, node, out);
}

int32_t CudaGraphs::add_dependencies(uint64_t graph, std::span<const uint64_t> from, std::span<const uint64_t> to) {
  auto f = node_list(from), t = node_list(to);
  return cudaGraphAddDependencies(as<cudaGraph_t>(graph), f.data(), t.data(), nullptr, f.size());
}

int32_t CudaGraphs::remove_dependencies(uint64_t graph, std::span<const uint64_t> from,
                                        std::span<const uint64_t> to) {
  auto f = node_list(from), t = node_list(to);
  return cudaGraphRemoveDependencies(as<cudaGraph_t>(graph), f.data(), t.data(), nullptr, f.size());
}

int32_t CudaGraphs::find_in_clone(uint64_t* out, uint64_t node, uint64_t clone) {
  cudaGraphNode_t n = nullptr;
  cudaError_t e = cudaGraphNodeFindInClone(&n, as<cudaGraphNode_t>(node), as<cudaGraph_t>(clone));
  *out = handle(n);
  return e;
}

int32_t CudaGraphs::child_graph(uint64_t node, uint64_t* graph) {
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaGraphChildGraphNodeGetGraph(as<cudaGraphNode_t>(node), &g);
  *graph = handle(g);
  return e;
}

int32_t CudaGraphs::conditional_handle_create(uint64_t* out, uint64_t graph, uint32_t default_value,
                                              uint32_t flags) {
  cudaGraphConditionalHandle h = 0;
  cudaError_t e = cudaGraphConditionalHandleCreate(&h, as<cudaGraph_t>(graph), default_value, flags);
  *out = h;
  return e;
}

int32_t CudaGraphs::instantiate(uint64_t* exec, uint64_t graph, uint64_t flags) {
  cudaGraphExec_t x = nullptr;
  cudaError_t e = cudaGraphInstantiateWithFlags(&x, as<cudaGraph_t>(graph), flags);
  *exec = handle(x);
  return e;
}

int32_t CudaGraphs::exec_destroy(uint64_t exec) { return cudaGraphExecDestroy(as<cudaGraphExec_t>(exec)); }

int32_t CudaGraphs::exec_flags(uint64_t exec, uint64_t* flags) {
  unsigned long long f = 0;
  cudaError_t e = cudaGraphExecGetFlags(as<cudaGraphExec_t>(exec), &f);
  *flags = f;
  return e;
}

int32_t CudaGraphs::launch_graph(uint64_t exec, uint64_t stream) {
  return cudaGraphLaunch(as<cudaGraphExec_t>(exec), as<cudaStream_t>(stream));
}

int32_t CudaGraphs::upload(uint64_t exec, uint64_t stream) {
  return cudaGraphUpload(as<cudaGraphExec_t>(exec), as<cudaStream_t>(stream));
}

int32_t CudaGraphs::exec_update(uint64_t exec, uint64_t graph, int32_t* result, uint64_t* error_node) {
  cudaGraphExecUpdateResultInfo info{};
  cudaError_t e = cudaGraphExecUpdate(as<cudaGraphExec_t>(exec), as<cudaGraph_t>(graph), &info);
  *result = info.result;
  *error_node = handle(info.errorNode);
  return e;
}

int32_t CudaGraphs::exec_set_params(uint64_t exec, uint64_t node, const GraphNodeParams& p) {
  cudaGraphExec_t x = as<cudaGraphExec_t>(exec);
  cudaGraphNode_t n = as<cudaGraphNode_t>(node);
  int32_t type;
  if (int32_t e = node_type(node, &type)) return e;
  if (type != p.type) return cudaErrorInvalidValue;
  switch (type) {
    case cudaGraphNodeTypeKernel: {
      KernelArgs args;
      CUDA_KERNEL_NODE_PARAMS k;
      if (int32_t e = kernel_params(p, &args, &k)) return e;
      return rt(cuGraphExecKernelNodeSetParams(reinterpret_cast<CUgraphExec>(x), reinterpret_cast<CUgraphNode>(n),
                                               &k));
    }
    case cudaGraphNodeTypeMemcpy: {
      auto m = memcpy_params(p);
      return cudaGraphExecMemcpyNodeSetParams(x, n, &m);
    }
    case cudaGraphNodeTypeMemset: {
      auto m = memset_params(p);
      return cudaGraphExecMemsetNodeSetParams(x, n, &m);
    }
    case cudaGraphNodeTypeGraph: return cudaGraphExecChildGraphNodeSetParams(x, n, as<cudaGraph_t>(p.handle));
    case cudaGraphNodeTypeEventRecord: return cudaGraphExecEventRecordNodeSetEvent(x, n, as<cudaEvent_t>(p.handle));
    case cudaGraphNodeTypeWaitEvent: return cudaGraphExecEventWaitNodeSetEvent(x, n, as<cudaEvent_t>(p.handle));
    case cudaGraphNodeTypeHost: {
      auto h = host_params(p);
      return cudaGraphExecHostNodeSetParams(x, n, &h);
    }
    case cudaGraphNodeTypeExtSemaphoreSignal: {
      SignalArrays a(p.semaphores);
      auto s = a.node<cudaExternalSemaphoreSignalNodeParams>();
      return cudaGraphExecExternalSemaphoresSignalNodeSetParams(x, n, &s);
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
      WaitArrays a(p.semaphores);
      auto w = a.node<cudaExternalSemaphoreWaitNodeParams>();
      return cudaGraphExecExternalSemaphoresWaitNodeSetParams(x, n, &w);
    }
    case proto::kGraphNodeTypeBatchMemOp: {
      std::vector<CUstreamBatchMemOpParams> ops;
      CUDA_BATCH_MEM_OP_NODE_PARAMS m;
      if (int32_t e = mem_op_params(p, &ops, &m)) return e;
      return rt(cuGraphExecBatchMemOpNodeSetParams(reinterpret_cast<CUgraphExec>(x), reinterpret_cast<CUgraphNode>(n),
                                                   &m));
    }
    default: return cudaErrorInvalidValue;
  }
}

int32_t CudaGraphs::set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) {
  return cudaGraphNodeSetEnabled(as<cudaGraphExec_t>(exec), as<cudaGraphNode_t>(node), enabled);
}

int32_t CudaGraphs::get_enabled(uint64_t exec, uint64_t node, uint32_t* enabled) {
  unsigned v = 0;
  cudaError_t e = cudaGraphNodeGetEnabled(as<cudaGraphExec_t>(exec), as<cudaGraphNode_t>(node), &v);
  *enabled = v;
  return e;
}

// CUDA writes DOT only to a file: a private temporary one here, read back
// for the client, which writes the application's file.
int32_t CudaGraphs::dot_print(uint64_t graph, uint32_t flags, std::string* dot) {
  char path[] = "/tmp/rgpu-graph-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return cudaErrorOperatingSystem;
  close(fd);
  cudaError_t e = cudaGraphDebugDotPrint(as<cudaGraph_t>(graph), path, flags);
  if (e == cudaSuccess) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    *dot = text.str();
  }
  unlink(path);
  return e;
}

int32_t CudaGraphs::begin_capture(uint64_t stream, int32_t mode) {
  return cudaStreamBeginCapture(as<cudaStream_t>(stream), static_cast<cudaStreamCaptureMode>(mode));
}

int32_t CudaGraphs::begin_capture_to_graph(uint64_t stream, uint64_t graph, std::span<const uint64_t> deps,
                                           int32_t mode) {
  auto d = node_list(deps);
  return cudaStreamBeginCaptureToGraph(as<cudaStream_t>(stream), as<cudaGraph_t>(graph), d.data(), nullptr,
                                       d.size(), static_cast<cudaStreamCaptureMode>(mode));
}

int32_t CudaGraphs::end_capture(uint64_t stream, uint64_t* graph) {
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaStreamEndCapture(as<cudaStream_t>(stream), &g);
  *graph = handle(g);
  return e;
}

int32_t CudaGraphs::capture_info(uint64_t stream, CaptureInfo* info) {
  cudaStreamCaptureStatus status;
  unsigned long long id = 0;
  cudaGraph_t g = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  size_t n = 0;
  if (cudaError_t e = cudaStreamGetCaptureInfo(as<cudaStream_t>(stream), &status, &id, &g, &deps, nullptr, &n))
    return e;
  info->status = status;
  info->id = id;
  info->graph = handle(g);
  for (size_t i = 0; i < n; ++i) info->dependencies.push_back(handle(deps[i]));
  return cudaSuccess;
}

int32_t CudaGraphs::update_capture_dependencies(uint64_t stream, std::span<const uint64_t> deps, uint32_t flags) {
  auto d = node_list(deps);
  return cudaStreamUpdateCaptureDependencies(as<cudaStream_t>(stream), d.data(), nullptr, d.size(), flags);
}

int32_t CudaGraphs::capture_host_node(uint64_t stream, uint64_t record) {
  g_host_node_runner = host_node_runner_;
  return cudaLaunchHostFunc(as<cudaStream_t>(stream), run_host_node, as<void*>(record));
}

int32_t CudaGraphs::exchange_capture_mode(int32_t* mode) {
  // `m` is read back below, whatever the driver did with it: a number the
  // enum cannot hold must not become it (protocol/wire_enum.hpp).
  if (*mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
  auto m = static_cast<cudaStreamCaptureMode>(*mode);
  cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
  *mode = m;
  return e;
}

int32_t CudaGraphs::kernel_node_get_attribute(uint64_t node, int32_t attr, cudaLaunchAttributeValue* value) {
  return cudaGraphKernelNodeGetAttribute(as<cudaGraphNode_t>(node), static_cast<cudaLaunchAttributeID>(attr), value);
}

int32_t CudaGraphs::kernel_node_set_attribute(uint64_t node, int32_t attr, const cudaLaunchAttributeValue& value) {
  return cudaGraphKernelNodeSetAttribute(as<cudaGraphNode_t>(node), static_cast<cudaLaunchAttributeID>(attr), &value);
}

int32_t CudaGraphs::kernel_node_copy_attributes(uint64_t dst, uint64_t src) {
  return cudaGraphKernelNodeCopyAttributes(as<cudaGraphNode_t>(dst), as<cudaGraphNode_t>(src));
}

int32_t CudaGraphs::user_object_create(uint64_t* object, uint64_t record, uint32_t refs, uint32_t flags) {
  g_host_node_runner = host_node_runner_;
  cudaUserObject_t o = nullptr;
  cudaError_t e = cudaUserObjectCreate(&o, as<void*>(record), run_host_node, refs, flags);
  *object = handle(o);
  return e;
}

int32_t CudaGraphs::user_object_retain(uint64_t object, uint32_t count) {
  return cudaUserObjectRetain(as<cudaUserObject_t>(object), count);
}

int32_t CudaGraphs::user_object_release(uint64_t object, uint32_t count) {
  return cudaUserObjectRelease(as<cudaUserObject_t>(object), count);
}

int32_t CudaGraphs::graph_retain_user_object(uint64_t graph, uint64_t object, uint32_t count, uint32_t flags) {
  return cudaGraphRetainUserObject(as<cudaGraph_t>(graph), as<cudaUserObject_t>(object), count, flags);
}

int32_t CudaGraphs::graph_release_user_object(uint64_t graph, uint64_t object, uint32_t count) {
  return cudaGraphReleaseUserObject(as<cudaGraph_t>(graph), as<cudaUserObject_t>(object), count);
}

int32_t CudaGraphs::get_graph_mem_attribute(int device, int32_t attr, uint64_t* value) {
  unsigned long long v = 0;  // every attribute is a cuuint64_t
  cudaError_t e = cudaDeviceGetGraphMemAttribute(device, static_cast<cudaGraphMemAttributeType>(attr), &v);
  *value = v;
  return e;
}

int32_t CudaGraphs::set_graph_mem_attribute(int device, int32_t attr, uint64_t value) {
  unsigned long long v = value;
  return cudaDeviceSetGraphMemAttribute(device, static_cast<cudaGraphMemAttributeType>(attr), &v);
}

}  // namespace rgpu::server
