// What a worker needs from the thing that owns the GPU. Two backends: `cuda`
// (the real GPU, in a module loaded at run time so the daemon and CI never
// need a driver) and `host-test` (host memory, for tests without a GPU).
// Every call returns a cudaError_t value; handles are the backend's own
// values, validated by the worker before they reach the backend.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/backend/array_api.hpp"
#include "server/backend/external_api.hpp"
#include "server/backend/generated/forwarded_api.hpp"
#include "server/backend/graph_backend.hpp"
#include "server/backend/green_context_api.hpp"
#include "server/backend/nccl_api.hpp"
#include "transport/memory_kind.hpp"

namespace rgpu::server {

using DevPtr = uint64_t;
using Handle = uint64_t;

struct KernelParam {
  uint32_t offset;
  uint32_t size;
};

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  uint32_t shared_mem;
  Handle stream;
  bool cooperative = false;  // all blocks resident at once (grid-wide sync)
  // cudaLaunchKernelExC / cuLaunchKernelEx attributes; the events in them are
  // already this backend's handles and every pointer checked.
  std::vector<cudaLaunchAttribute> attributes;
};

// One operation of cuStreamBatchMemOp (cuStreamWaitValue*, cuStreamWriteValue*
// are batches of one), its address already checked against the session.
struct StreamMemOp {
  uint32_t type;   // CUstreamBatchMemOpType
  uint32_t flags;  // CUstreamWaitValue_flags, CUstreamWriteValue_flags or barrier flags
  DevPtr address;  // 0 for barriers and flushes
  uint64_t value;  // 32-bit operations use the low half
};

// One input of a JIT link (cuLinkAddData).
struct LinkInput {
  int32_t type;  // CUjitInputType
  std::string name;
  std::vector<uint8_t> data;
};

// A shareable handle of memory or a pool: a POSIX file descriptor (owned
// by whoever holds the struct) or a fabric handle's bytes.
struct ShareableHandle {
  CUmemAllocationHandleType type = CU_MEM_HANDLE_TYPE_NONE;
  int fd = -1;
  CUmemFabricHandle fabric{};
};

// Where a backend delivers a device's async notifications (over-budget...).
class AsyncNotificationSink {
 public:
  virtual ~AsyncNotificationSink() = default;
  // Must return quickly, as the driver asks of its callbacks.
  virtual void notify(const cudaAsyncNotificationInfo_t& info) = 0;
};

class Backend : public ForwardedApi {
 public:
  ~Backend() override = default;

  virtual std::string name() const = 0;
  // Where device memory lives: GPU memory, or this process's own host memory
  // (host-test), which a zero-copy transport reaches as such.
  virtual transport::MemoryKind device_memory() const = 0;
  // Runs once per worker before it serves anyone: checks the GPUs and
  // initialises CUDA with the first one's context, so a client never waits
  // for CUDA start-up; the others' contexts come when a session names them.
  virtual int32_t init(const std::vector<int>& gpus) = 0;
  virtual int32_t set_device(int ordinal) = 0;
  virtual int32_t versions(int* driver, int* runtime) = 0;
  virtual int32_t device_count(int* count) = 0;
  virtual int32_t get_device_properties(cudaDeviceProp* prop, int ordinal) = 0;
  virtual int32_t device_attribute(int* value, cudaDeviceAttr attr, int ordinal) = 0;
  virtual int32_t device_synchronize() = 0;
  virtual int32_t device_reset() = 0;
  virtual std::string error_string(int32_t error) = 0;

  virtual int32_t malloc(DevPtr* ptr, size_t size) = 0;
  virtual int32_t malloc_pitch(DevPtr* ptr, size_t* pitch, size_t width, size_t height) = 0;
  virtual int32_t free(DevPtr ptr) = 0;
  virtual int32_t mem_get_info(size_t* free, size_t* total) = 0;

  // Stream-ordered allocation; pool 0 is the current device's current pool.
  // Pool attributes travel as 64-bit values whatever their C type.
  virtual int32_t malloc_async(DevPtr* ptr, size_t size, Handle pool, Handle stream) = 0;
  virtual int32_t free_async(DevPtr ptr, Handle stream) = 0;
  virtual int32_t mem_pool_create(Handle* pool, const cudaMemPoolProps& props) = 0;
  virtual int32_t mem_pool_destroy(Handle pool) = 0;
  virtual int32_t mem_pool_set_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t value) = 0;
  virtual int32_t mem_pool_get_attribute(Handle pool, cudaMemPoolAttr attr, uint64_t* value) = 0;
  virtual int32_t mem_pool_trim_to(Handle pool, size_t keep) = 0;
  virtual int32_t device_get_default_mem_pool(Handle* pool, int ordinal) = 0;
  virtual int32_t device_get_mem_pool(Handle* pool, int ordinal) = 0;
  virtual int32_t device_set_mem_pool(int ordinal, Handle pool) = 0;
  // Page-locked host memory for staging copies; host-test uses plain memory.
  virtual int32_t alloc_staging(size_t size, void** p) = 0;
  virtual void free_staging(void* p) = 0;
  // Page-locks memory shared with a client on this host (shm transport).
  virtual int32_t host_register(void* p, size_t size) = 0;
  virtual int32_t host_unregister(void* p) = 0;

  // One side of each copy is a worker-local host buffer or both are device.
  virtual int32_t memcpy_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                               Handle stream) = 0;
  // A copy whose host side is memory shared with the client and registered
  // (host_register): it outlives the call, so a capturing stream takes the
  // copy into its graph, where the worker buffers of memcpy_async could not go.
  virtual int32_t memcpy_shared_async(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                                      Handle stream) = 0;
  virtual int32_t memcpy2d_async(void* dst, size_t dpitch, const void* src, size_t spitch,
                                 size_t width, size_t height, cudaMemcpyKind kind,
                                 Handle stream) = 0;
  virtual int32_t memset_async(DevPtr ptr, int value, size_t n, Handle stream) = 0;
  virtual int32_t memset2d_async(DevPtr ptr, size_t pitch, int value, size_t width,
                                 size_t height, Handle stream) = 0;

  virtual int32_t stream_create(Handle* stream, unsigned flags, int priority) = 0;
  virtual int32_t stream_destroy(Handle stream) = 0;
  virtual int32_t stream_synchronize(Handle stream) = 0;
  virtual int32_t stream_query(Handle stream) = 0;
  virtual int32_t stream_wait_event(Handle stream, Handle event, unsigned flags) = 0;
  // Only the attributes a stream takes, their values already checked.
  virtual int32_t stream_set_attribute(Handle stream, cudaLaunchAttributeID attr,
                                       const cudaLaunchAttributeValue& value) = 0;
  virtual int32_t stream_get_attribute(Handle stream, cudaLaunchAttributeID attr,
                                       cudaLaunchAttributeValue* value) = 0;
  virtual int32_t event_create(Handle* event, unsigned flags) = 0;
  virtual int32_t event_destroy(Handle event) = 0;
  virtual int32_t event_record(Handle event, Handle stream) = 0;
  virtual int32_t event_synchronize(Handle event) = 0;
  virtual int32_t event_query(Handle event) = 0;
  virtual int32_t event_elapsed_time(float* ms, Handle start, Handle end) = 0;
  // Runs fn(arg) on a host thread once the stream gets there; later work on
  // the stream waits for it to return.
  virtual int32_t launch_host_func(Handle stream, void (*fn)(void*), void* arg) = 0;

  // image is what cuModuleLoadData takes (a whole fat binary, a cubin or PTX);
  // the module lives on the current device.
  virtual int32_t module_load(std::span<const uint8_t> image, Handle* module) = 0;
  virtual int32_t module_unload(Handle module) = 0;
  virtual int32_t module_get_function(Handle module, const std::string& name, Handle* function,
                                      std::vector<KernelParam>* params) = 0;
  // size_hint is what the client registered; host-test allocates by it.
  virtual int32_t module_get_global(Handle module, const std::string& name, size_t size_hint,
                                    DevPtr* ptr, size_t* size) = 0;
  // A module's managed (__managed__) variable: cudaErrorSymbolNotFound when
  // it has none of that name (a plain variable included).
  virtual int32_t module_get_managed(Handle module, const std::string& name, DevPtr* ptr, size_t* size) = 0;
  // args holds the parameters packed at the offsets module_get_function gave.
  virtual int32_t launch(Handle function, const LaunchConfig& config,
                         std::span<uint8_t> args) = 0;
  virtual int32_t func_get_attributes(cudaFuncAttributes* attr, Handle function) = 0;
  virtual int32_t func_set_attribute(Handle function, cudaFuncAttribute attr, int value) = 0;
  virtual int32_t func_set_cache_config(Handle function, cudaFuncCache config) = 0;
  virtual int32_t occupancy_max_active_blocks(int* blocks, Handle function, int block_size,
                                              size_t dynamic_smem, unsigned flags) = 0;

  // CUDA arrays, 3-D copies, texture and surface objects and references
  // (array_api.hpp).
  virtual ArrayApi& arrays() = 0;
  // Clusters, libraries and the runtime's odds and ends.
  virtual int32_t occupancy_max_active_clusters(int* clusters, Handle function, const LaunchConfig& config) = 0;
  virtual int32_t occupancy_max_potential_cluster_size(int* size, Handle function,
                                                       const LaunchConfig& config) = 0;
  virtual int32_t occupancy_available_dynamic_smem(size_t* bytes, Handle function, int blocks,
                                                   int block_size) = 0;
  // The names of every kernel of a loaded module.
  virtual int32_t module_function_names(Handle module, std::vector<std::string>* names) = 0;
  virtual int32_t event_record_with_flags(Handle event, Handle stream, unsigned flags) = 0;
  virtual int32_t stream_copy_attributes(Handle dst, Handle src) = 0;
  virtual int32_t func_set_shared_mem_config(Handle function, cudaSharedMemConfig config) = 0;
  // Peer access between GPUs of this server; the client answers for GPUs of
  // different servers itself. Enable/disable act from the current device.
  virtual int32_t device_can_access_peer(int* can, int device, int peer) = 0;
  virtual int32_t device_enable_peer_access(int peer, unsigned flags) = 0;
  virtual int32_t device_disable_peer_access(int peer) = 0;
  virtual int32_t device_get_p2p_attribute(int* value, cudaDeviceP2PAttr attr, int src, int dst) = 0;
  virtual int32_t device_get_p2p_atomic_capabilities(unsigned* caps, const cudaAtomicOperation* ops,
                                                     unsigned count, int src, int dst) = 0;
  virtual int32_t device_get_host_atomic_capabilities(unsigned* caps, const cudaAtomicOperation* ops,
                                                      unsigned count, int device) = 0;
  // What `device` may do with a pool's memory (cudaMemPoolSetAccess).
  virtual int32_t mem_pool_set_access(Handle pool, int device, cudaMemAccessFlags flags) = 0;
  virtual int32_t mem_pool_get_access(cudaMemAccessFlags* flags, Handle pool, int device) = 0;
  // Virtual memory management, as the driver's cuMem* calls: physical
  // allocations, address reservations, mappings and their access. Results
  // are CUresult values (numbered as the runtime's errors they mean).
  virtual int32_t vmm_granularity(size_t* granularity, const CUmemAllocationProp& prop,
                                  CUmemAllocationGranularity_flags option) = 0;
  virtual int32_t vmm_create(Handle* allocation, size_t size, const CUmemAllocationProp& prop) = 0;
  virtual int32_t vmm_release(Handle allocation) = 0;
  // A multicast object (cuMulticastCreate), released with vmm_release.
  virtual int32_t multicast_create(Handle* object, const CUmulticastObjectProp& prop) = 0;
  // `hint`: the address wanted, 0 for any; as the driver's, only a hint.
  virtual int32_t vmm_reserve(DevPtr* ptr, size_t size, size_t alignment, DevPtr hint) = 0;
  virtual int32_t vmm_free(DevPtr ptr, size_t size) = 0;
  virtual int32_t vmm_map(DevPtr ptr, size_t size, size_t offset, Handle allocation) = 0;
  virtual int32_t vmm_unmap(DevPtr ptr, size_t size) = 0;
  virtual int32_t vmm_set_access(DevPtr ptr, size_t size, int device, CUmemAccess_flags flags) = 0;
  virtual int32_t vmm_get_access(unsigned long long* flags, int device, DevPtr ptr) = 0;
  // Shareable handles (handle->type says which kind is asked for). An
  // export's descriptor is the caller's to close; an import only reads the
  // handle (the caller closes its descriptor). An imported allocation's
  // *size is 0 where only the driver knows it (its cuMemMap checks bound
  // it); prop->location.id is this server's ordinal.
  virtual int32_t vmm_export(Handle allocation, ShareableHandle* handle) = 0;
  virtual int32_t vmm_import(const ShareableHandle& handle, Handle* allocation, size_t* size,
                             CUmemAllocationProp* prop) = 0;
  // Pools created with handle types; an imported pool lends its pointers
  // (mem_pool_import_pointer) but never allocates.
  virtual int32_t mem_pool_export(Handle pool, ShareableHandle* handle) = 0;
  virtual int32_t mem_pool_import(const ShareableHandle& handle, Handle* pool) = 0;
  virtual int32_t mem_pool_export_pointer(DevPtr ptr, CUmemPoolPtrExportData* data) = 0;
  virtual int32_t mem_pool_import_pointer(Handle pool, const CUmemPoolPtrExportData& data, DevPtr* ptr,
                                          size_t* size) = 0;
  // A dma-buf descriptor of device memory (cuMemGetHandleForAddressRange).
  virtual int32_t mem_range_handle(DevPtr ptr, size_t size, CUmemRangeHandleType type, unsigned long long flags,
                                   int* fd) = 0;
  // IPC between worker processes of this host: an exported allocation or
  // event becomes bytes that another worker's import turns back into an
  // address or event of its own.
  virtual int32_t ipc_export_memory(DevPtr base, size_t size, std::vector<uint8_t>* blob) = 0;
  virtual int32_t ipc_import_memory(std::span<const uint8_t> blob, size_t size, DevPtr* ptr) = 0;
  virtual int32_t ipc_close_memory(DevPtr ptr) = 0;
  virtual int32_t ipc_export_event(Handle event, std::vector<uint8_t>* blob) = 0;
  virtual int32_t ipc_import_event(std::span<const uint8_t> blob, Handle* event) = 0;
  // Async notifications of device `ordinal` go to `sink` (on a thread of the
  // backend's choosing) until unregistered.
  virtual int32_t register_async_notification(int ordinal, AsyncNotificationSink* sink, Handle* registration) = 0;
  virtual int32_t unregister_async_notification(int ordinal, Handle registration) = 0;
  // The device address of memory host_register pinned (zero-copy mapping).
  virtual int32_t host_get_device_pointer(DevPtr* ptr, void* p) = 0;
  // Graphs and stream capture (graph_backend.hpp).
  virtual GraphBackend& graphs() = 0;
  // Driver API: stream memory operations in stream order, and a JIT link of
  // PTX, cubins, fat binaries and libraries into one image (cuLinkComplete's).
  virtual int32_t stream_mem_ops(Handle stream, std::span<const StreamMemOp> ops, unsigned flags) = 0;
  // Hardware decompression (cuMemBatchDecompressAsync); *failed: the index of
  // the operation an error concerns, SIZE_MAX for the batch.
  virtual int32_t mem_batch_decompress(Handle stream, std::span<CUmemDecompressParams> ops, unsigned flags,
                                       size_t* failed) = 0;
  virtual int32_t link(std::span<const LinkInput> inputs, std::vector<uint8_t>* image) = 0;
  // Green contexts and device resources (green_context_api.hpp).
  virtual GreenContextApi& green_contexts() = 0;
  // External memory and semaphores (external_api.hpp).
  virtual ExternalApi& external() = 0;
  // NCCL on this backend's GPUs (nccl_api.hpp).
  virtual NcclApi& nccl() = 0;
};

// Loads a backend by name ("cuda" loads librgpu-backend-cuda.so at run time).
std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error);

}  // namespace rgpu::server
