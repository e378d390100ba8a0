// The real GPU: the CUDA runtime for memory, streams and events, the driver
// API for modules and launches (fat binaries loaded whole, parameter layouts
// from cuFuncGetParamInfo). Built as a module the worker loads at run time.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>

#include "protocol/mem_pool_attr.hpp"
#include "server/backend/cuda/cuda_arrays.hpp"
#include "server/backend/cuda/cuda_external.hpp"
#include "server/backend/cuda/cuda_graphs.hpp"
#include "server/backend/cuda/cuda_green_contexts.hpp"
#include "server/backend/cuda/cuda_nccl.hpp"
#include "server/backend/cuda/generated/cuda_forwarded_api.hpp"

namespace rgpu::server {
namespace {

template <typename T>
T as(Handle h) {
  return reinterpret_cast<T>(h);
}

template <typename T>
Handle handle(T p) {
  return reinterpret_cast<Handle>(p);
}

// CUresult and cudaError_t share their numbering for every error the driver
// calls here return (invalid value/handle/image, not found, out of memory).
int32_t rt(CUresult r) { return static_cast<int32_t>(r); }

// The runtime's launch attributes are the driver's: same ids, same value
// layout (events are CUevents), so they are copied as they are.
static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(static_cast<int>(cudaLaunchAttributeNvlinkUtilCentricScheduling) ==
              static_cast<int>(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING));

// A LaunchConfig as the driver's CUlaunchConfig, owning its attribute array.
struct DriverLaunchConfig {
  explicit DriverLaunchConfig(const LaunchConfig& c) : attributes(c.attributes.size()) {
    std::memcpy(attributes.data(), c.attributes.data(), attributes.size() * sizeof(CUlaunchAttribute));
    if (c.cooperative) {
      CUlaunchAttribute cooperative{};
      cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      cooperative.value.cooperative = 1;
      attributes.push_back(cooperative);
    }
    config = CUlaunchConfig{c.grid.x,  c.grid.y,  c.grid.z,     c.block.x,
                            c.block.y, c.block.z, c.shared_mem, reinterpret_cast<CUstream>(c.stream),
                            attributes.data(), static_cast<unsigned>(attributes.size())};
  }
  std::vector<CUlaunchAttribute> attributes;
  CUlaunchConfig config;
};

// Where an export writes a shareable handle: an int for a POSIX descriptor,
// the struct for a fabric handle.
void* handle_out(ShareableHandle* h) {
  if (h->type == CU_MEM_HANDLE_TYPE_FABRIC) return &h->fabric;
  return &h->fd;
}

// What an import takes: a POSIX descriptor by value in the pointer, a fabric
// handle by address.
void* handle_in(const ShareableHandle& h) {
  if (h.type == CU_MEM_HANDLE_TYPE_FABRIC) return const_cast<CUmemFabricHandle*>(&h.fabric);
  return reinterpret_cast<void*>(static_cast<intptr_t>(h.fd));
}

class CudaBackend final : public CudaForwardedApi {
 public:
  std::string name() const override { return "cuda"; }
  transport::MemoryKind device_memory() const override { return transport::MemoryKind::gpu; }

  // The first GPU's primary context now, before a client waits; the other
  // GPUs of a session when it opens (set_device: cudaSetDevice creates a
  // device's primary context). The driver creates contexts one at a time
  // across processes, so a worker start that created one per exported GPU
  // would cost every session, and the server's start rate, for GPUs most
  // sessions never touch.
  int32_t init(const std::vector<int>& gpus) override {
    if (gpus.empty()) return cudaErrorNoDevice;
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count)) return e;
    for (int g : gpus)
      if (g < 0 || g >= count) return cudaErrorInvalidDevice;
    if (cudaError_t e = cudaSetDevice(gpus.front())) return e;
    return cudaFree(nullptr);  // creates the primary context now
  }
  int32_t set_device(int ordinal) override { return cudaSetDevice(ordinal); }
  // Asked in every hello, before an MPS worker's CUDA starts: neither call
  // may initialise CUDA, since the driver reads the session's compute share
  // (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) once, at cuInit. The runtime is
  // linked statically, so its version is the one built against.
  int32_t versions(int* driver, int* runtime) override {
    *runtime = CUDART_VERSION;
    return cuDriverGetVersion(driver) == CUDA_SUCCESS ? cudaSuccess : cudaErrorInsufficientDriver;
  }
  int32_t device_count(int* count) override { return cudaGetDeviceCount(count); }
  int32_t device_attribute(int* value, cudaDeviceAttr attr, int ordinal) override {
    return cudaDeviceGetAttribute(value, attr, ordinal);
  }
  int32_t get_device_properties(cudaDeviceProp* prop, int ordinal) override {
    return cudaGetDeviceProperties(prop, ordinal);
  }
  int32_t device_synchronize() override { return cudaDeviceSynchronize(); }
  int32_t device_reset() override { return cudaDeviceReset(); }
  std::string error_string(int32_t error) override { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

  int32_t malloc(DevPtr* ptr, size_t size) override {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, size);
    *ptr = handle(p);
    return e;
  }
  int32_t malloc_pitch(DevPtr* ptr, size_t* pitch, size_t width, size_t height) override {
    void* p = nullptr;
    cudaError_t e = cudaMallocPitch(&p, pitch, width, height);
    *ptr = handle(p);
    return e;
  }
  int32_t free(DevPtr ptr) override { return cudaFree(as<void*>(ptr)); }
  int32_t mem_get_info(size_t* free, size_t* total) override { return cudaMemGetInfo(free, total); }
  int32_t alloc_staging(size_t size, void** p) override { return cudaHostAlloc(p, size, cudaHostAllocPortable); }
  void free_staging(void* p) override { cudaFreeHost(p); }
  int32_t host_register(void* p, size_t size) override {
    // Mapped too, so kernels may use it in place (zero-copy host memory).
    // Staging for a captured copy is registered while the capture goes on,
    // where CUDA refuses (and ends captures for) unsafe calls in global mode.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaError_t e = cudaHostRegister(p, size, cudaHostRegisterPortable | cudaHostRegisterMapped);
    cudaThreadExchangeStreamCaptureMode(&mode);
    return e;
  }
  int32_t host_unregister(void* p) override { return cudaHostUnregister(p); }

  // The host side of a copy here is a worker buffer that a captured graph
  // could not read again: such a copy is refused during capture.
  int32_t memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, Handle stream) override {
    if (kind != cudaMemcpyDeviceToDevice && CudaGraphs::capturing(as<cudaStream_t>(stream)))
      return CudaGraphs::capture_refused(as<cudaStream_t>(stream));
    return cudaMemcpyAsync(dst, src, n, kind, as<cudaStream_t>(stream));
  }
  int32_t memcpy_shared_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind, Handle stream) override {
    return cudaMemcpyAsync(dst, src, n, kind, as<cudaStream_t>(stream));
  }
  int32_t memcpy2d_async(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, Handle stream) override {
    if (kind != cudaMemcpyDeviceToDevice && CudaGraphs::capturing(as<cudaStream_t>(stream)))
      return CudaGraphs::capture_refused(as<cudaStream_t>(stream));
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, as<cudaStream_t>(stream));
  }
  int32_t memset_async(DevPtr ptr, int value, size_t n, Handle stream) override {
    return cudaMemsetAsync(as<void*>(ptr), value, n, as<cudaStream_t>(stream));
  }
  int32_t memset2d_async(DevPtr ptr, size_t pitch, int value, size_t width, size_t height,
                         Handle stream) override {
    return cudaMemset2DAsync(as<void*>(ptr), pitch, value, width, height, as<cudaStream_t>(stream));
  }

  int32_t stream_create(Handle* stream, unsigned flags, int priority) override {
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithPriority(&s, flags, priority);
    *stream = handle(s);
    return e;
  }
  int32_t stream_destroy(Handle stream) override { return cudaStreamDestroy(as<cudaStream_t>(stream)); }
  int32_t stream_synchronize(Handle stream) override { return cudaStreamSynchronize(as<cudaStream_t>(stream)); }
  int32_t stream_query(Handle stream) override { return cudaStreamQuery(as<cudaStream_t>(stream)); }
  int32_t stream_wait_event(Handle stream, Handle event, unsigned flags) override {
    return cudaStreamWaitEvent(as<cudaStream_t>(stream), as<cudaEvent_t>(event), flags);
  }
  int32_t stream_set_attribute(Handle stream, cudaLaunchAttributeID attr,
                               const cudaLaunchAttributeValue& value) override {
    return cudaStreamSetAttribute(as<cudaStream_t>(stream), attr, &value);
  }
  int32_t stream_get_attribute(Handle stream, cudaLaunchAttributeID attr, cudaLaunchAttributeValue* value) override {
    return cudaStreamGetAttribute(as<cudaStream_t>(stream), attr, value);
  }
  int32_t event_create(Handle* event, unsigned flags) override {
    cudaEvent_t e = nullptr;
    cudaError_t r = cudaEventCreateWithFlags(&e, flags);
    *event = handle(e);
    return r;
  }
  int32_t event_destroy(Handle event) override { return cudaEventDestroy(as<cudaEvent_t>(event)); }
  int32_t event_record(Handle event, Handle stream) override {
    return cudaEventRecord(as<cudaEvent_t>(event), as<cudaStream_t>(stream));
  }
  int32_t event_synchronize(Handle event) override { return cudaEventSynchronize(as<cudaEvent_t>(event)); }
  int32_t event_query(Handle event) override { return cudaEventQuery(as<cudaEvent_t>(event)); }
  int32_t event_elapsed_time(float* ms, Handle start, Handle end) override {
    return cudaEventElapsedTime(ms, as<cudaEvent_t>(start), as<cudaEvent_t>(end));
  }
  int32_t malloc_async(DevPtr* ptr, size_t size, Handle pool, Handle stream) override {
    void* p = nullptr;
    cudaError_t e = pool ? cudaMallocFromPoolAsync(&p, size, as<cudaMemPool_t>(pool), as<cudaStream_t>(stream))
                         : cudaMallocAsync(&p, size, as<cudaStream_t>(stream));
    *ptr = handle(p);
    return e;
  }
  int32_t free_async(DevPtr ptr, Handle stream) override {
    return cudaFreeAsync(as<void*>(ptr), as<cudaStream_t>(stream));
  }
  int32_t mem_pool_create(Handle* pool, const cudaMemPoolProps& props) override {
    cudaMemPool_t p = nullptr;
    cudaError_t e = cudaMemPoolCreate(&p, &props);
    *pool = handle(p);
    return e;
  }
  int32_t mem_pool_destroy(Handle pool) override { return cudaMemPoolDestroy(as<cudaMemPool_t>(pool)); }
  int32_t mem_pool_set_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t value) override {
    if (proto::pool_attribute_is_64_bit(attr)) {
      cuuint64_t v = value;
      return cudaMemPoolSetAttribute(as<cudaMemPool_t>(pool), attr, &v);
    }
    int v = static_cast<int>(value);
    return cudaMemPoolSetAttribute(as<cudaMemPool_t>(pool), attr, &v);
  }
  int32_t mem_pool_get_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t* value) override {
    if (proto::pool_attribute_is_64_bit(attr)) {
      cuuint64_t v = 0;
      cudaError_t e = cudaMemPoolGetAttribute(as<cudaMemPool_t>(pool), attr, &v);
      *value = v;
      return e;
    }
    int v = 0;
    cudaError_t e = cudaMemPoolGetAttribute(as<cudaMemPool_t>(pool), attr, &v);
    *value = static_cast<uint64_t>(v);
    return e;
  }
  int32_t mem_pool_trim_to(Handle pool, size_t keep) override {
    return cudaMemPoolTrimTo(as<cudaMemPool_t>(pool), keep);
  }
  int32_t device_get_default_mem_pool(Handle* pool, int ordinal) override {
    cudaMemPool_t p = nullptr;
    cudaError_t e = cudaDeviceGetDefaultMemPool(&p, ordinal);
    *pool = handle(p);
    return e;
  }
  int32_t device_get_mem_pool(Handle* pool, int ordinal) override {
    cudaMemPool_t p = nullptr;
    cudaError_t e = cudaDeviceGetMemPool(&p, ordinal);
    *pool = handle(p);
    return e;
  }
  int32_t device_set_mem_pool(int ordinal, Handle pool) override {
    return cudaDeviceSetMemPool(ordinal, as<cudaMemPool_t>(pool));
  }

  // The callback record runs once: a captured graph could not run it again.
  int32_t launch_host_func(Handle stream, void (*fn)(void*), void* arg) override {
    if (CudaGraphs::capturing(as<cudaStream_t>(stream))) return CudaGraphs::capture_refused(as<cudaStream_t>(stream));
    return cudaLaunchHostFunc(as<cudaStream_t>(stream), fn, arg);
  }

  int32_t module_load(std::span<const uint8_t> image, Handle* module) override {
    CUmodule m = nullptr;
    // The driver picks the image for this GPU from the fat binary, or JITs
    // its PTX, exactly as for a local program. The client loads modules on a
    // kernel's first launch, which may come inside a stream capture: CUDA
    // loads lazily there too, so loading must not count as an unsafe call.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    CUresult r = cuModuleLoadData(&m, image.data());
    cudaThreadExchangeStreamCaptureMode(&mode);
    *module = handle(m);
    return rt(r);
  }
  int32_t module_unload(Handle module) override { return rt(cuModuleUnload(as<CUmodule>(module))); }
  int32_t module_get_function(Handle module, const std::string& name, Handle* function,
                              std::vector<KernelParam>* params) override {
    CUfunction f = nullptr;
    if (CUresult r = cuModuleGetFunction(&f, as<CUmodule>(module), name.c_str())) return rt(r);
    params->clear();
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
      params->push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
    }
    *function = handle(f);
    return cudaSuccess;
  }
  int32_t module_get_global(Handle module, const std::string& name, size_t, DevPtr* ptr, size_t* size) override {
    CUdeviceptr p = 0;
    CUresult r = cuModuleGetGlobal(&p, size, as<CUmodule>(module), name.c_str());
    *ptr = p;
    return rt(r);
  }
  static void deliver_async_notification(cudaAsyncNotificationInfo_t* info, void* sink, cudaAsyncCallbackHandle_t) {
    static_cast<AsyncNotificationSink*>(sink)->notify(*info);
  }
  int32_t register_async_notification(int ordinal, AsyncNotificationSink* sink, Handle* registration) override {
    cudaAsyncCallbackHandle_t h = nullptr;
    cudaError_t e = cudaDeviceRegisterAsyncNotification(ordinal, deliver_async_notification, sink, &h);
    *registration = reinterpret_cast<Handle>(h);
    return e;
  }
  int32_t unregister_async_notification(int ordinal, Handle registration) override {
    return cudaDeviceUnregisterAsyncNotification(ordinal, reinterpret_cast<cudaAsyncCallbackHandle_t>(registration));
  }
  int32_t module_get_managed(Handle module, const std::string& name, DevPtr* ptr, size_t* size) override {
    CUdeviceptr p = 0;
    CUresult r = cuModuleGetGlobal(&p, size, as<CUmodule>(module), name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) return cudaErrorSymbolNotFound;
    if (r != CUDA_SUCCESS) return rt(r);
    unsigned managed = 0;
    if (CUresult a = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p)) return rt(a);
    if (!managed) return cudaErrorSymbolNotFound;
    *ptr = p;
    return cudaSuccess;
  }
  int32_t launch(Handle function, const LaunchConfig& c, std::span<uint8_t> args) override {
    size_t size = args.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    if (!c.cooperative && c.attributes.empty())
      return rt(cuLaunchKernel(as<CUfunction>(function), c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y,
                               c.block.z, c.shared_mem, as<CUstream>(c.stream), nullptr, size ? extra : nullptr));
    DriverLaunchConfig config(c);
    return rt(cuLaunchKernelEx(&config.config, as<CUfunction>(function), nullptr, size ? extra : nullptr));
  }
  int32_t func_get_attributes(cudaFuncAttributes* a, Handle function) override {
    auto f = as<CUfunction>(function);
    int v = 0;
    auto get = [&](CUfunction_attribute attr) {
      return cuFuncGetAttribute(&v, attr, f) == CUDA_SUCCESS ? v : 0;
    };
    a->maxThreadsPerBlock = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a->sharedSizeBytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    a->constSizeBytes = get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    a->localSizeBytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    a->numRegs = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    a->ptxVersion = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    a->binaryVersion = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    a->cacheModeCA = get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    a->maxDynamicSharedSizeBytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    a->preferredShmemCarveout = get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    a->clusterDimMustBeSet = get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET);
    a->requiredClusterWidth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
    a->requiredClusterHeight = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
    a->requiredClusterDepth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    a->nonPortableClusterSizeAllowed = get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
    a->clusterSchedulingPolicyPreference = get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    return cudaSuccess;
  }
  int32_t func_set_attribute(Handle function, cudaFuncAttribute attr, int value) override {
    // cudaFuncAttribute values are the driver's CUfunction_attribute values.
    return rt(cuFuncSetAttribute(as<CUfunction>(function), static_cast<CUfunction_attribute>(attr), value));
  }
  int32_t func_set_cache_config(Handle function, cudaFuncCache config) override {
    return rt(cuFuncSetCacheConfig(as<CUfunction>(function), static_cast<CUfunc_cache>(config)));
  }
  int32_t occupancy_max_active_blocks(int* blocks, Handle function, int block_size, size_t smem,
                                      unsigned flags) override {
    return rt(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, as<CUfunction>(function), block_size,
                                                                   smem, flags));
  }
  ArrayApi& arrays() override { return arrays_; }

 private:
  CudaArrays arrays_;

  int32_t occupancy_max_active_clusters(int* clusters, Handle function, const LaunchConfig& c) override {
    DriverLaunchConfig config(c);
    return rt(cuOccupancyMaxActiveClusters(clusters, as<CUfunction>(function), &config.config));
  }
  int32_t occupancy_max_potential_cluster_size(int* size, Handle function, const LaunchConfig& c) override {
    DriverLaunchConfig config(c);
    return rt(cuOccupancyMaxPotentialClusterSize(size, as<CUfunction>(function), &config.config));
  }
  int32_t occupancy_available_dynamic_smem(size_t* bytes, Handle function, int blocks, int block_size) override {
    return rt(cuOccupancyAvailableDynamicSMemPerBlock(bytes, as<CUfunction>(function), blocks, block_size));
  }
  int32_t module_function_names(Handle module, std::vector<std::string>* names) override {
    unsigned count = 0;
    if (CUresult r = cuModuleGetFunctionCount(&count, as<CUmodule>(module))) return rt(r);
    std::vector<CUfunction> functions(count);
    if (CUresult r = cuModuleEnumerateFunctions(functions.data(), count, as<CUmodule>(module))) return rt(r);
    names->clear();
    for (CUfunction f : functions) {
      const char* name = nullptr;
      if (CUresult r = cuFuncGetName(&name, f)) return rt(r);
      names->push_back(name);
    }
    return cudaSuccess;
  }
  int32_t event_record_with_flags(Handle event, Handle stream, unsigned flags) override {
    return cudaEventRecordWithFlags(as<cudaEvent_t>(event), as<cudaStream_t>(stream), flags);
  }
  int32_t stream_copy_attributes(Handle dst, Handle src) override {
    return cudaStreamCopyAttributes(as<cudaStream_t>(dst), as<cudaStream_t>(src));
  }
  int32_t func_set_shared_mem_config(Handle function, cudaSharedMemConfig config) override {
    // Deprecated, still exported: the application asked for it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return rt(cuFuncSetSharedMemConfig(as<CUfunction>(function), static_cast<CUsharedconfig>(config)));
#pragma GCC diagnostic pop
  }

  int32_t device_can_access_peer(int* can, int device, int peer) override {
    return cudaDeviceCanAccessPeer(can, device, peer);
  }
  int32_t device_enable_peer_access(int peer, unsigned flags) override {
    return cudaDeviceEnablePeerAccess(peer, flags);
  }
  int32_t device_disable_peer_access(int peer) override { return cudaDeviceDisablePeerAccess(peer); }
  int32_t device_get_p2p_attribute(int* value, cudaDeviceP2PAttr attr, int src, int dst) override {
    return cudaDeviceGetP2PAttribute(value, attr, src, dst);
  }
  int32_t device_get_p2p_atomic_capabilities(unsigned* caps, const cudaAtomicOperation* ops, unsigned count,
                                             int src, int dst) override {
    return cudaDeviceGetP2PAtomicCapabilities(caps, ops, count, src, dst);
  }
  int32_t device_get_host_atomic_capabilities(unsigned* caps, const cudaAtomicOperation* ops, unsigned count,
                                              int device) override {
    return cudaDeviceGetHostAtomicCapabilities(caps, ops, count, device);
  }
  int32_t mem_pool_set_access(Handle pool, int device, cudaMemAccessFlags flags) override {
    cudaMemAccessDesc desc{};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = device;
    desc.flags = flags;
    return cudaMemPoolSetAccess(as<cudaMemPool_t>(pool), &desc, 1);
  }
  int32_t mem_pool_get_access(cudaMemAccessFlags* flags, Handle pool, int device) override {
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id = device;
    return cudaMemPoolGetAccess(flags, as<cudaMemPool_t>(pool), &location);
  }
  int32_t vmm_granularity(size_t* granularity, const CUmemAllocationProp& prop,
                          CUmemAllocationGranularity_flags option) override {
    return rt(cuMemGetAllocationGranularity(granularity, &prop, option));
  }
  int32_t vmm_create(Handle* allocation, size_t size, const CUmemAllocationProp& prop) override {
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cuMemCreate(&h, size, &prop, 0);
    *allocation = h;
    return rt(r);
  }
  int32_t vmm_release(Handle allocation) override { return rt(cuMemRelease(allocation)); }
  int32_t multicast_create(Handle* object, const CUmulticastObjectProp& prop) override {
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cuMulticastCreate(&h, &prop);
    *object = h;
    return rt(r);
  }
  int32_t vmm_reserve(DevPtr* ptr, size_t size, size_t alignment, DevPtr hint) override {
    CUdeviceptr p = 0;
    CUresult r = cuMemAddressReserve(&p, size, alignment, hint, 0);
    *ptr = p;
    return rt(r);
  }
  int32_t vmm_free(DevPtr ptr, size_t size) override { return rt(cuMemAddressFree(ptr, size)); }
  int32_t vmm_map(DevPtr ptr, size_t size, size_t offset, Handle allocation) override {
    return rt(cuMemMap(ptr, size, offset, allocation, 0));
  }
  int32_t vmm_unmap(DevPtr ptr, size_t size) override { return rt(cuMemUnmap(ptr, size)); }
  int32_t vmm_set_access(DevPtr ptr, size_t size, int device, CUmemAccess_flags flags) override {
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = device;
    desc.flags = flags;
    return rt(cuMemSetAccess(ptr, size, &desc, 1));
  }
  int32_t vmm_get_access(unsigned long long* flags, int device, DevPtr ptr) override {
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    return rt(cuMemGetAccess(flags, &location, ptr));
  }
  int32_t ipc_export_memory(DevPtr base, size_t, std::vector<uint8_t>* blob) override {
    cudaIpcMemHandle_t h;
    if (cudaError_t e = cudaIpcGetMemHandle(&h, as<void*>(base))) return e;
    blob->assign(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + sizeof h);
    return cudaSuccess;
  }
  int32_t ipc_import_memory(std::span<const uint8_t> blob, size_t, DevPtr* ptr) override {
    cudaIpcMemHandle_t h;
    if (blob.size() != sizeof h) return cudaErrorInvalidResourceHandle;
    std::memcpy(&h, blob.data(), sizeof h);
    void* p = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    *ptr = handle(p);
    return e;
  }
  int32_t ipc_close_memory(DevPtr ptr) override { return cudaIpcCloseMemHandle(as<void*>(ptr)); }
  int32_t ipc_export_event(Handle event, std::vector<uint8_t>* blob) override {
    cudaIpcEventHandle_t h;
    if (cudaError_t e = cudaIpcGetEventHandle(&h, as<cudaEvent_t>(event))) return e;
    blob->assign(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + sizeof h);
    return cudaSuccess;
  }
  int32_t ipc_import_event(std::span<const uint8_t> blob, Handle* event) override {
    cudaIpcEventHandle_t h;
    if (blob.size() != sizeof h) return cudaErrorInvalidResourceHandle;
    std::memcpy(&h, blob.data(), sizeof h);
    cudaEvent_t e = nullptr;
    cudaError_t r = cudaIpcOpenEventHandle(&e, h);
    *event = handle(e);
    return r;
  }
  int32_t vmm_export(Handle allocation, ShareableHandle* handle) override {
    return rt(cuMemExportToShareableHandle(handle_out(handle), allocation, handle->type, 0));
  }
  int32_t vmm_import(const ShareableHandle& handle, Handle* allocation, size_t* size,
                     CUmemAllocationProp* prop) override {
    CUmemGenericAllocationHandle h = 0;
    if (CUresult r = cuMemImportFromShareableHandle(&h, handle_in(handle), handle.type)) return rt(r);
    if (CUresult r = cuMemGetAllocationPropertiesFromHandle(prop, h)) {
      cuMemRelease(h);
      return rt(r);
    }
    prop->win32HandleMetaData = nullptr;
    *allocation = h;
    *size = 0;  // the driver does not say; it checks cuMemMap's bounds itself
    return cudaSuccess;
  }
  int32_t mem_pool_export(Handle pool, ShareableHandle* handle) override {
    return cudaMemPoolExportToShareableHandle(handle_out(handle), as<cudaMemPool_t>(pool),
                                              static_cast<cudaMemAllocationHandleType>(handle->type), 0);
  }
  int32_t mem_pool_import(const ShareableHandle& shared, Handle* pool) override {
    cudaMemPool_t p = nullptr;
    cudaError_t e = cudaMemPoolImportFromShareableHandle(&p, handle_in(shared),
                                                         static_cast<cudaMemAllocationHandleType>(shared.type), 0);
    *pool = handle(p);
    return e;
  }
  int32_t mem_pool_export_pointer(DevPtr ptr, CUmemPoolPtrExportData* data) override {
    static_assert(sizeof(CUmemPoolPtrExportData) == sizeof(cudaMemPoolPtrExportData));
    return cudaMemPoolExportPointer(reinterpret_cast<cudaMemPoolPtrExportData*>(data), as<void*>(ptr));
  }
  int32_t mem_pool_import_pointer(Handle pool, const CUmemPoolPtrExportData& data, DevPtr* ptr,
                                  size_t* size) override {
    cudaMemPoolPtrExportData copy;
    std::memcpy(&copy, &data, sizeof copy);
    void* p = nullptr;
    if (cudaError_t e = cudaMemPoolImportPointer(&p, as<cudaMemPool_t>(pool), &copy)) return e;
    CUdeviceptr base = 0;
    if (CUresult r = cuMemGetAddressRange(&base, size, handle(p))) {
      cudaFree(p);
      return rt(r);
    }
    *ptr = handle(p);
    return cudaSuccess;
  }
  int32_t mem_range_handle(DevPtr ptr, size_t size, CUmemRangeHandleType type, unsigned long long flags,
                           int* fd) override {
    return rt(cuMemGetHandleForAddressRange(fd, ptr, size, type, flags));
  }
  int32_t host_get_device_pointer(DevPtr* ptr, void* p) override {
    void* d = nullptr;
    cudaError_t e = cudaHostGetDevicePointer(&d, p, 0);
    *ptr = handle(d);
    return e;
  }

  GraphBackend& graphs() override { return graphs_; }
  GreenContextApi& green_contexts() override { return green_contexts_; }
  ExternalApi& external() override { return external_; }
  NcclApi& nccl() override { return nccl_; }

 private:
  CudaGraphs graphs_;
  CudaGreenContexts green_contexts_;
  CudaExternal external_;
  CudaNccl nccl_;

  int32_t stream_mem_ops(Handle stream, std::span<const StreamMemOp> ops, unsigned flags) override {
    std::vector<CUstreamBatchMemOpParams> params(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const StreamMemOp& op = ops[i];
      CUstreamBatchMemOpParams& p = params[i];
      p = {};
      p.operation = static_cast<CUstreamBatchMemOpType>(op.type);
      switch (p.operation) {
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        case CU_STREAM_MEM_OP_WAIT_VALUE_64:
          p.waitValue.address = op.address;
          p.waitValue.value64 = op.value;
          p.waitValue.flags = op.flags;
          break;
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        case CU_STREAM_MEM_OP_WRITE_VALUE_64:
          p.writeValue.address = op.address;
          p.writeValue.value64 = op.value;
          p.writeValue.flags = op.flags;
          break;
        case CU_STREAM_MEM_OP_BARRIER: p.memoryBarrier.flags = op.flags; break;
        default: p.flushRemoteWrites.flags = op.flags; break;
      }
    }
    return rt(cuStreamBatchMemOp(as<CUstream>(stream), static_cast<unsigned>(params.size()), params.data(), flags));
  }
  int32_t mem_batch_decompress(Handle stream, std::span<CUmemDecompressParams> ops, unsigned flags,
                               size_t* failed) override {
    return rt(cuMemBatchDecompressAsync(ops.data(), ops.size(), flags, failed, as<CUstream>(stream)));
  }
  int32_t link(std::span<const LinkInput> inputs, std::vector<uint8_t>* image) override {
    CUlinkState state;
    if (CUresult r = cuLinkCreate(0, nullptr, nullptr, &state)) return rt(r);
    CUresult r = CUDA_SUCCESS;
    for (const LinkInput& in : inputs) {
      r = cuLinkAddData(state, static_cast<CUjitInputType>(in.type), const_cast<uint8_t*>(in.data.data()),
                        in.data.size(), in.name.c_str(), 0, nullptr, nullptr);
      if (r != CUDA_SUCCESS) break;
    }
    void* cubin = nullptr;
    size_t size = 0;
    if (r == CUDA_SUCCESS) r = cuLinkComplete(state, &cubin, &size);
    if (r == CUDA_SUCCESS) image->assign(static_cast<uint8_t*>(cubin), static_cast<uint8_t*>(cubin) + size);
    cuLinkDestroy(state);
    return rt(r);
  }
};

}  // namespace
}  // namespace rgpu::server

// The entry point the worker looks up after loading this module.
extern "C" rgpu::server::Backend* rgpu_make_cuda_backend() { return new rgpu::server::CudaBackend; }
