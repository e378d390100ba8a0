// What a worker needs from the thing that owns the GPU. Two backends: `cuda`
// (the real GPU, in a module loaded at run time so the daemon and CI never
// need a driver) and `host-test` (host memory, for tests without a GPU).
// Every call returns a cudaError_t value; handles are the backend's own
// values, validated by the worker before they reach the backend.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/backend/generated/forwarded_api.hpp"

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

class Backend : public ForwardedApi {
 public:
  ~Backend() override = default;

  virtual std::string name() const = 0;
  // Runs once per worker before it serves anyone: initialises the GPUs so a
  // client never waits for CUDA start-up.
  virtual int32_t init(const std::vector<int>& gpus) = 0;
  virtual int32_t set_device(int ordinal) = 0;
  virtual int32_t versions(int* driver, int* runtime) = 0;
  virtual int32_t device_count(int* count) = 0;
  virtual int32_t get_device_properties(cudaDeviceProp* prop, int ordinal) = 0;
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
  // args holds the parameters packed at the offsets module_get_function gave.
  virtual int32_t launch(Handle function, const LaunchConfig& config,
                         std::span<uint8_t> args) = 0;
  virtual int32_t func_get_attributes(cudaFuncAttributes* attr, Handle function) = 0;
  virtual int32_t func_set_attribute(Handle function, cudaFuncAttribute attr, int value) = 0;
  virtual int32_t func_set_cache_config(Handle function, cudaFuncCache config) = 0;
  virtual int32_t occupancy_max_active_blocks(int* blocks, Handle function, int block_size,
                                              size_t dynamic_smem, unsigned flags) = 0;

  // Driver API: stream memory operations in stream order, and a JIT link of
  // PTX, cubins, fat binaries and libraries into one image (cuLinkComplete's).
  virtual int32_t stream_mem_ops(Handle stream, std::span<const StreamMemOp> ops, unsigned flags) = 0;
  virtual int32_t link(std::span<const LinkInput> inputs, std::vector<uint8_t>* image) = 0;
};

// Loads a backend by name ("cuda" loads librgpu-backend-cuda.so at run time).
std::unique_ptr<Backend> make_backend(const std::string& name, std::string* error);

}  // namespace rgpu::server
