#include "client/graph/node_params.hpp"

#include <cuda.h>

#include <cstring>
#include <map>
#include <mutex>

#include "client/core/array_objects.hpp"
#include "client/graph/handles.hpp"
#include "client/core/host_callback_runner.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "common/log.hpp"

namespace rgpu::client {
namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// What one side of a copy node is.
enum class Side { device, shared_host, pageable_host };

// A copy's side of `span` bytes: device memory of `device` (cudaMemcpyDefault
// asks the memory map; other kinds say it), page-locked host memory the
// device's worker maps (shm), or other host memory, which a graph reaches
// through staging (staged_copy.hpp); over tcp and ucx all host memory
// is that.
cudaError_t copy_side(int device, const void* p, size_t span, bool kind_says_device, bool default_kind, Side* side) {
  auto range = MemoryMap::get().find_device(addr(p));
  bool on_device = default_kind ? range.has_value() : kind_says_device;
  *side = Side::device;
  if (on_device)  // copies between GPUs are not graph nodes here
    return range && range->device != device ? cudaErrorInvalidValue : cudaSuccess;
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return cudaErrorInvalidDevice;
  const bool shares = dev->session->shares_memory();
  if (shares && MemoryMap::get().find_shared(addr(p), span)) {
    *side = Side::shared_host;
    return cudaSuccess;
  }
  // Starting in page-locked memory and running past its end.
  if (auto host = MemoryMap::get().find_host(addr(p));
      host && (shares ? host->shared_fd >= 0 : addr(p) - host->base + span > host->size))
    return cudaErrorInvalidValue;
  *side = Side::pageable_host;
  return cudaSuccess;
}

// The host_sides marks of a copy's destination or source side.
uint8_t side_marks(Side side, uint8_t host, uint8_t pageable) {
  return side == Side::device ? 0 : side == Side::shared_host ? host : host | pageable;
}


struct HostFunction {
  cudaHostFn_t fn;
  void* user_data;
};
std::mutex g_host_mutex;
std::map<uint64_t, HostFunction>& host_functions() {
  static auto* m = new std::map<uint64_t, HostFunction>;
  return *m;
}

struct KernelParamsCopy {
  std::vector<uint8_t> packed;
  std::vector<void*> pointers;
  size_t size = 0;  // of packed, for an `extra` list
};
std::mutex g_params_mutex;
std::map<cudaGraphNode_t, KernelParamsCopy>& kernel_params_copies() {
  static auto* m = new std::map<cudaGraphNode_t, KernelParamsCopy>;
  return *m;
}

}  // namespace

cudaError_t kernel_node(int device, const LoadedKernel& k, dim3 grid, dim3 block, unsigned shared_mem,
                        void** params, void** extra, GraphNodeParams* p) {
  const cudaDeviceProp* props;
  if (cudaError_t e = Runtime::get().properties(device, &props)) return e;
  if (cudaError_t e = check_launch_config(*props, grid, block)) return e;
  if (shared_mem > static_cast<unsigned>(k.max_dynamic_shared)) return cudaErrorInvalidValue;
  p->type = cudaGraphNodeTypeKernel;
  p->function = k.function;
  p->grid = grid;
  p->block = block;
  p->shared_mem = shared_mem;
  if (cudaError_t e = pack_launch_args(k, params, extra, &p->args)) return e;
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return cudaErrorInvalidDevice;
  return reach_host_pointer_args(MemoryMap::get(), &p->args, device, dev->session->shares_memory());
}

cudaError_t copy_node(int device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                      size_t height, cudaMemcpyKind kind, GraphNodeParams* p) {
  return copy_box_node(device, {dst, dpitch}, {const_cast<void*>(src), spitch}, CopyBox{width, height}, kind, p);
}

namespace {

// The destination or source side of copy node `p` (its width, height and
// depth set) on the wire; `side` says what it is (an array is device memory),
// `element` an array's element size.
cudaError_t node_side(int device, const CopyNodeSide& s, bool is_dst, bool kind_says_device, bool by_default,
                      GraphNodeParams* p, size_t* element, Side* side) {
  if (s.array) {
    auto a = arrays().find(const_cast<cudaArray_t>(s.array));
    if (!a) return cudaErrorInvalidResourceHandle;
    if (a->device != device || !array_holds(*a, s.x, s.y, s.z, p->width, p->height, p->depth))
      return cudaErrorInvalidValue;
    (is_dst ? p->dst_array : p->src_array) = a->remote;
    (is_dst ? p->dst_at : p->src_at) = {s.x, s.y, s.z};
    *element = a->element;
    *side = Side::device;
    return cudaSuccess;
  }
  uint64_t& pitch = is_dst ? p->dst_pitch : p->src_pitch;
  uint64_t& slice = is_dst ? p->dst_slice : p->src_slice;
  (is_dst ? p->dst : p->src) = addr(s.ptr);
  pitch = p->height > 1 || p->depth > 1 ? s.pitch : p->width;
  slice = p->depth > 1 ? s.slice : 0;
  uint64_t span;
  if (!proto::copy_span(pitch, slice, *p, &span)) return cudaErrorInvalidPitchValue;
  return copy_side(device, s.ptr, span, kind_says_device, by_default, side);
}

}  // namespace

cudaError_t copy_box_node(int device, const CopyNodeSide& dst, const CopyNodeSide& src, const CopyBox& box,
                          cudaMemcpyKind kind, GraphNodeParams* p) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  p->type = cudaGraphNodeTypeMemcpy;
  p->width = box.width;
  p->height = box.height;
  p->depth = box.depth;
  bool by_default = kind == cudaMemcpyDefault;
  Side dst_side, src_side;
  size_t dst_element = 0, src_element = 0;
  if (cudaError_t e = node_side(device, dst, true, kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyHostToDevice,
                                by_default, p, &dst_element, &dst_side))
    return e;
  if (cudaError_t e = node_side(device, src, false, kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDeviceToHost,
                                by_default, p, &src_element, &src_side))
    return e;
  // Between two arrays, elements of one size (as CUDA's copies).
  if (dst_element && src_element && dst_element != src_element) return cudaErrorInvalidValue;
  // Between two host buffers one of which is pageable, the copy is this
  // process's own: both sides are marked pageable (staged_copy.hpp).
  if (dst_side != Side::device && src_side != Side::device &&
      (dst_side == Side::pageable_host || src_side == Side::pageable_host))
    dst_side = src_side = Side::pageable_host;
  p->host_sides = side_marks(dst_side, proto::kHostDst, proto::kPageableDst) |
                  side_marks(src_side, proto::kHostSrc, proto::kPageableSrc);
  return cudaSuccess;
}

cudaError_t copy3d_node(int device, const cudaMemcpy3DParms& m, GraphNodeParams* p) {
  if ((m.srcArray != nullptr) == (m.srcPtr.ptr != nullptr) || (m.dstArray != nullptr) == (m.dstPtr.ptr != nullptr))
    return cudaErrorInvalidValue;
  // With an array taking part, the width and every x position count its
  // elements (as CUDA's cudaMemcpy3D, checked on the H100).
  size_t element = 1;
  if (m.srcArray || m.dstArray) {
    auto a = arrays().find(const_cast<cudaArray_t>(m.srcArray ? m.srcArray : m.dstArray));
    if (!a) return cudaErrorInvalidResourceHandle;
    element = a->element;
  }
  auto side = [&](cudaArray_t array, const cudaPitchedPtr& ptr, const cudaPos& pos) {
    if (array) return CopyNodeSide{nullptr, 0, 0, array, pos.x * element, pos.y, pos.z};
    auto* first = static_cast<char*>(ptr.ptr) + (pos.z * ptr.ysize + pos.y) * ptr.pitch + pos.x * element;
    return CopyNodeSide{first, ptr.pitch, ptr.ysize};
  };
  CopyBox box{m.extent.width * element, m.extent.height, m.extent.depth};
  return copy_box_node(device, side(m.dstArray, m.dstPtr, m.dstPos), side(m.srcArray, m.srcPtr, m.srcPos), box,
                       m.kind, p);
}

cudaError_t symbol_copy_node(int device, const void* symbol, void* other, size_t count, size_t offset,
                             cudaMemcpyKind kind, bool to_symbol, GraphNodeParams* p) {
  VarEntry* v = ModuleRegistry::get().find_var(symbol);
  if (!v) return cudaErrorInvalidSymbol;
  const LoadedVar* lv;
  if (cudaError_t e = ModuleRegistry::get().var_on(v, device, &lv)) return e;
  if (offset > lv->size || count > lv->size - offset) return cudaErrorInvalidValue;
  auto* var = reinterpret_cast<char*>(lv->address) + offset;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  // The variable is device memory; the other side is device or host memory.
  Side side;
  if (cudaError_t e = copy_side(device, other, count, kind == cudaMemcpyDeviceToDevice, kind == cudaMemcpyDefault,
                                &side))
    return e;
  p->host_sides = to_symbol ? side_marks(side, proto::kHostSrc, proto::kPageableSrc)
                            : side_marks(side, proto::kHostDst, proto::kPageableDst);
  p->type = cudaGraphNodeTypeMemcpy;
  p->dst = addr(to_symbol ? var : other);
  p->src = addr(to_symbol ? other : var);
  p->dst_pitch = p->src_pitch = p->width = count;
  p->height = 1;
  return cudaSuccess;
}

cudaError_t memset_node(void* dst, size_t pitch, unsigned value, unsigned element_size, size_t width,
                        size_t height, GraphNodeParams* p) {
  if (element_size != 1 && element_size != 2 && element_size != 4) return cudaErrorInvalidValue;
  p->type = cudaGraphNodeTypeMemset;
  p->dst = addr(dst);
  p->dst_pitch = height > 1 ? pitch : width * element_size;
  p->value = value;
  p->element_size = element_size;
  p->width = width;
  p->height = height;
  return cudaSuccess;
}

cudaError_t event_node(int device, cudaGraphNodeType type, cudaEvent_t event, GraphNodeParams* p) {
  RemoteObject o;
  if (!event || !events().find(event, &o)) return cudaErrorInvalidResourceHandle;
  if (o.device != device) return cudaErrorInvalidValue;
  p->type = type;
  p->handle = o.remote;
  return cudaSuccess;
}

cudaError_t child_node(int device, cudaGraph_t graph, GraphNodeParams* p, int ownership) {
  RemoteObject o;
  if (!graph || !graph_handles().find(graph, &o) || o.device != device) return cudaErrorInvalidValue;
  if (ownership != cudaGraphChildGraphOwnershipClone && ownership != cudaGraphChildGraphOwnershipMove)
    return cudaErrorInvalidValue;
  p->type = cudaGraphNodeTypeGraph;
  p->handle = o.remote;
  p->value = static_cast<uint32_t>(ownership);
  return cudaSuccess;
}

cudaError_t alloc_node(int device, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
                       size_t access_count, size_t bytes, GraphNodeParams* p) {
  if (bytes == 0 || (access_count && !access)) return cudaErrorInvalidValue;
  if (props.location.type != cudaMemLocationTypeDevice || props.location.id != device) return cudaErrorInvalidValue;
  if (props.allocType != cudaMemAllocationTypePinned || props.handleTypes != cudaMemHandleTypeNone)
    return cudaErrorNotSupported;  // shareable graph memory is not offered
  // The allocating device reads and writes it; other GPUs' access is not offered.
  for (size_t i = 0; i < access_count; ++i)
    if (access[i].location.type != cudaMemLocationTypeDevice || access[i].location.id != device)
      return cudaErrorNotSupported;
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return cudaErrorInvalidDevice;
  p->type = cudaGraphNodeTypeMemAlloc;
  p->width = bytes;
  p->value = static_cast<uint32_t>(dev->remote);
  return cudaSuccess;
}

cudaError_t free_node(int device, void* dptr, GraphNodeParams* p) {
  // Device memory of this device; once a graph frees a graph allocation, no
  // other free may (CUDA frees one only once, in the graph that made it).
  // Other addresses are the server's to judge.
  auto range = MemoryMap::get().find_device(addr(dptr));
  if (!dptr || (range && (range->base != addr(dptr) || range->device != device || range->freed_in_graph)))
    return cudaErrorInvalidValue;
  p->type = cudaGraphNodeTypeMemFree;
  p->dst = addr(dptr);
  return cudaSuccess;
}

namespace {
struct AllocRequest {
  cudaMemPoolProps props;
  std::vector<cudaMemAccessDesc> access;
};
std::mutex g_alloc_mutex;
std::map<cudaGraphNode_t, AllocRequest>& alloc_requests() {
  static auto* m = new std::map<cudaGraphNode_t, AllocRequest>;
  return *m;
}
}  // namespace

void remember_alloc(cudaGraphNode_t node, const cudaMemPoolProps& props, const cudaMemAccessDesc* access,
                    size_t access_count) {
  std::lock_guard lock(g_alloc_mutex);
  alloc_requests()[node] = AllocRequest{props, {access, access + access_count}};
}

void alloc_request(cudaGraphNode_t node, int device, cudaMemPoolProps* props, const cudaMemAccessDesc** access,
                   size_t* access_count) {
  std::lock_guard lock(g_alloc_mutex);
  auto it = alloc_requests().find(node);
  if (it == alloc_requests().end()) {
    *props = cudaMemPoolProps{};
    props->allocType = cudaMemAllocationTypePinned;
    props->location = cudaMemLocation{cudaMemLocationTypeDevice, device};
    *access = nullptr;
    *access_count = 0;
    return;
  }
  *props = it->second.props;
  *access = it->second.access.empty() ? nullptr : it->second.access.data();
  *access_count = it->second.access.size();
}

cudaError_t conditional_node(unsigned type, unsigned size, cudaGraphConditionalHandle handle, GraphNodeParams* p) {
  bool sized = type == cudaGraphCondTypeIf       ? size == 1 || size == 2
               : type == cudaGraphCondTypeWhile  ? size == 1
               : type == cudaGraphCondTypeSwitch ? size >= 1
                                                 : false;
  if (!sized) return cudaErrorInvalidValue;
  p->type = cudaGraphNodeTypeConditional;
  p->handle = handle;
  p->value = type;
  p->width = size;
  return cudaSuccess;
}

namespace {
std::mutex g_bodies_mutex;
std::map<cudaGraphNode_t, std::vector<cudaGraph_t>>& conditional_bodies() {
  static auto* m = new std::map<cudaGraphNode_t, std::vector<cudaGraph_t>>;
  return *m;
}
}  // namespace

cudaGraph_t* remember_bodies(cudaGraphNode_t node, std::vector<cudaGraph_t> bodies) {
  std::lock_guard lock(g_bodies_mutex);
  auto& b = conditional_bodies()[node];
  b = std::move(bodies);
  return b.data();
}

cudaError_t host_node(int device, cudaHostFn_t fn, void* user_data, GraphNodeParams* p) {
  if (!fn) return cudaErrorInvalidValue;
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return cudaErrorInvalidDevice;
  uint64_t id = dev->session->host_callbacks().add([fn, user_data] { fn(user_data); },
                                                     static_cast<uint16_t>(dev->remote), 0);
  if (id == 0) return cudaErrorNotSupported;  // the server offers no callback connection
  {
    std::lock_guard lock(g_host_mutex);
    host_functions()[id] = HostFunction{fn, user_data};
  }
  p->type = cudaGraphNodeTypeHost;
  p->handle = id;
  return cudaSuccess;
}

cudaEvent_t node_event(int device, const GraphNodeParams& p) { return events().intern(device, p.handle); }

bool node_host_function(const GraphNodeParams& p, cudaHostFn_t* fn, void** user_data) {
  std::lock_guard lock(g_host_mutex);
  auto it = host_functions().find(p.handle);
  if (it == host_functions().end()) return false;
  *fn = it->second.fn;
  *user_data = it->second.user_data;
  return true;
}

void** node_kernel_params(cudaGraphNode_t node, const LoadedKernel& k, const GraphNodeParams& p) {
  std::lock_guard lock(g_params_mutex);
  auto& c = kernel_params_copies()[node];
  c.packed = p.args;
  c.packed.resize(std::max<size_t>(c.packed.size(), k.args_size));
  c.pointers.clear();
  for (const auto& param : k.params) c.pointers.push_back(c.packed.data() + param.offset);
  return c.pointers.empty() ? nullptr : c.pointers.data();
}

void** node_kernel_extra(cudaGraphNode_t node, const LoadedKernel& k, const GraphNodeParams& p) {
  std::lock_guard lock(g_params_mutex);
  auto& c = kernel_params_copies()[node];
  c.packed = p.args;
  c.packed.resize(std::max<size_t>(c.packed.size(), k.args_size));
  c.size = c.packed.size();
  c.pointers = {CU_LAUNCH_PARAM_BUFFER_POINTER, c.packed.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &c.size,
                CU_LAUNCH_PARAM_END};
  return c.pointers.data();
}

cudaArray_t node_array(int device, uint64_t remote) {
  auto found = arrays().select([&](const ArrayObject& a) { return a.device == device && a.remote == remote; });
  return found.empty() ? nullptr : found.front();
}

cudaMemcpy3DParms node_copy3d(int device, const GraphNodeParams& p) {
  cudaMemcpy3DParms m{};
  size_t element = 1;
  if (proto::copies_array(p))
    if (auto a = arrays().find(node_array(device, p.dst_array ? p.dst_array : p.src_array))) element = a->element;
  auto side = [&](uint64_t array, const proto::ArrayPos& at, uint64_t ptr, uint64_t pitch, uint64_t slice,
                  cudaArray_t* out_array, cudaPitchedPtr* out_ptr, cudaPos* pos) {
    if (array) {
      *out_array = node_array(device, array);
      *pos = {at.x / element, at.y, at.z};
      return;
    }
    *out_ptr = cudaPitchedPtr{reinterpret_cast<void*>(ptr), pitch, p.width / element, p.depth > 1 ? slice : p.height};
  };
  side(p.dst_array, p.dst_at, p.dst, p.dst_pitch, p.dst_slice, &m.dstArray, &m.dstPtr, &m.dstPos);
  side(p.src_array, p.src_at, p.src, p.src_pitch, p.src_slice, &m.srcArray, &m.srcPtr, &m.srcPos);
  m.extent = cudaExtent{p.width / element, p.height, p.depth};
  m.kind = proto::copy_kind(p);
  return m;
}

}  // namespace rgpu::client
