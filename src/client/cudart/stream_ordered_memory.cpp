// Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) and memory
// pools. The server allocates in stream order and hands back the real
// address at once; pools are server objects behind client handles. Pools
// made with handle types cross to other processes through shareable
// handles (client/core/shareable_handle.hpp), their allocations through
// pointer export data.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/graph/capture.hpp"
#include "client/core/handles.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/shareable_handle.hpp"
#include "client/cudart/device_allocation.hpp"
#include "client/cudart/made_pools.hpp"
#include "common/log.hpp"
#include "protocol/mem_pool_attr.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// Allocates from `pool` (or the stream's device's current pool when null).
cudaError_t malloc_async(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  if (!ptr) return cudaErrorInvalidValue;
  Call call(proto::kOpMallocAsync);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  uint64_t remote_pool = 0;
  if (pool) {
    RemoteObject p;
    if (!mem_pools().find(pool, &p)) return cudaErrorInvalidValue;
    if (p.device != call.device_index()) return cudaErrorInvalidValue;
    remote_pool = p.remote;
  }
  call.args().put<uint64_t>(size).put<uint64_t>(remote_pool).put<uint64_t>(s);
  if (cudaError_t e = call.run()) return e;
  uint64_t p = call.reply().get<uint64_t>();
  // Captured, it is the capture's graph's allocation (see MemoryMap).
  Capture capture;
  uint64_t graph = capture_of(stream, &capture) ? reinterpret_cast<uint64_t>(capture.graph) : 0;
  if (p)
    if (cudaError_t e = remember_allocation(call, p, size, graph)) return e;
  *ptr = reinterpret_cast<void*>(p);
  return cudaSuccess;
}

// A call naming one pool, routed to the pool's device.
cudaError_t to_pool(Call& call, cudaMemPool_t pool) {
  RemoteObject p;
  if (!mem_pools().find(pool, &p)) return cudaErrorInvalidValue;
  int32_t ordinal;
  if (cudaError_t e = call.to_device(p.device, &ordinal)) return e;
  call.args().put<uint64_t>(p.remote);
  return cudaSuccess;
}

// The default or current pool of a device, as the application's handle.
cudaError_t device_pool(uint16_t op, cudaMemPool_t* pool, int device) {
  if (!pool) return cudaErrorInvalidValue;
  Call call(op);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return e;
  call.args().put<int32_t>(ordinal);
  if (cudaError_t e = call.run()) return e;
  *pool = mem_pools().intern(device, call.reply().get<uint64_t>());
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return api([&] { return malloc_async(devPtr, size, nullptr, hStream); });
}

extern "C" cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                               cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (!memPool) return cudaErrorInvalidValue;
    return malloc_async(ptr, size, memPool, stream);
  });
}

extern "C" cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpFreeAsync);
    uint64_t s;
    if (cudaError_t e = call.to_stream(hStream, &s)) return e;
    // free(NULL) semantics, as cudaFree: NVIDIA's libraries free buffers they
    // never needed this way (cusparseDestroyCsrilu02Info).
    if (!devPtr) return cudaSuccess;
    auto range = MemoryMap::get().freeable(reinterpret_cast<uint64_t>(devPtr));
    if (!range) return cudaErrorInvalidValue;
    if (call.device_index() != range->device) return cudaErrorInvalidValue;
    call.args().put<uint64_t>(range->base).put<uint64_t>(s);
    // A captured free of the capture's own allocation: only its graph frees
    // it. Otherwise forgotten now: the server may hand the address out again
    // to the next allocation in stream order.
    Capture capture;
    if (range->graph_memory && capture_of(hStream, &capture) &&
        range->graph == reinterpret_cast<uint64_t>(capture.graph))
      MemoryMap::get().graph_frees(range->base, range->graph);
    else
      MemoryMap::get().remove_device(range->base);
    return call.post();
  });
}

extern "C" cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const cudaMemPoolProps* poolProps) {
  return api([&]() -> cudaError_t {
    if (!memPool || !poolProps) return cudaErrorInvalidValue;
    if (poolProps->location.type != cudaMemLocationTypeDevice) return cudaErrorNotSupported;
    Call call(proto::kOpMemPoolCreate);
    int32_t ordinal;
    if (cudaError_t e = call.to_device(poolProps->location.id, &ordinal)) return e;
    cudaMemPoolProps props = *poolProps;
    props.location.id = ordinal;
    call.args().put(props);
    if (cudaError_t e = call.run()) return e;
    *memPool = mem_pools().add(call.device_index(), call.reply().get<uint64_t>());
    made_pools::remember(*memPool, props);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpMemPoolDestroy);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    if (cudaError_t e = call.run()) return e;
    mem_pools().remove(memPool);
    made_pools::forget(memPool);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolSetAttribute);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    uint64_t v = proto::pool_attribute_is_64_bit(attr) ? *static_cast<uint64_t*>(value)
                                                       : static_cast<uint64_t>(*static_cast<int*>(value));
    call.args().put<int32_t>(attr).put<uint64_t>(v);
    return call.run();
  });
}

extern "C" cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  return api([&]() -> cudaError_t {
    if (!value) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolGetAttribute);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    call.args().put<int32_t>(attr);
    if (cudaError_t e = call.quiet().run()) return e;
    uint64_t v = call.reply().get<uint64_t>();
    if (proto::pool_attribute_is_64_bit(attr))
      *static_cast<uint64_t*>(value) = v;
    else
      *static_cast<int*>(value) = static_cast<int>(v);
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  return api([&]() -> cudaError_t {
    Call call(proto::kOpMemPoolTrimTo);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    call.args().put<uint64_t>(minBytesToKeep);
    return call.run();
  });
}

extern "C" cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  return api([&] { return device_pool(proto::kOpDeviceGetDefaultMemPool, memPool, device); });
}

extern "C" cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  return api([&] { return device_pool(proto::kOpDeviceGetMemPool, memPool, device); });
}

extern "C" cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    RemoteObject p;
    if (!mem_pools().find(memPool, &p)) return cudaErrorInvalidValue;
    if (p.device != device) return cudaErrorInvalidDevice;
    Call call(proto::kOpDeviceSetMemPool);
    int32_t ordinal;
    if (cudaError_t e = call.to_device(device, &ordinal)) return e;
    call.args().put<int32_t>(ordinal).put<uint64_t>(p.remote);
    return call.run();
  });
}

extern "C" cudaError_t cudaMemPoolExportToShareableHandle(void* shareableHandle, cudaMemPool_t memPool,
                                                          cudaMemAllocationHandleType handleType, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!shareableHandle) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolExport);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    if (cudaError_t e = check_shareable_type(handleType)) return e;
    call.args().put<int32_t>(handleType).put<uint64_t>(flags);
    return run_export(call, handleType, shareableHandle);
  });
}

// The pool is imported on the current device's server and belongs to that
// device here.
extern "C" cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t* memPool, void* shareableHandle,
                                                            cudaMemAllocationHandleType handleType,
                                                            unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!memPool || flags) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolImport);
    if (cudaError_t e = call.to_current_device()) return e;
    if (cudaError_t e = check_shareable_type(handleType)) return e;
    if (cudaError_t e = run_import(call, handleType, shareableHandle, "cudaMemPoolImportFromShareableHandle")) return e;
    *memPool = mem_pools().add(call.device_index(), call.reply().get<uint64_t>());
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMemPoolExportPointer(cudaMemPoolPtrExportData* exportData, void* ptr) {
  return api([&]() -> cudaError_t {
    if (!exportData) return cudaErrorInvalidValue;
    auto range = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(ptr));
    if (!range) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolExportPointer);
    int32_t ordinal;
    if (cudaError_t e = call.to_device(range->device, &ordinal)) return e;
    call.args().put<uint64_t>(reinterpret_cast<uint64_t>(ptr));
    if (cudaError_t e = call.run()) return e;
    *exportData = call.reply().get<cudaMemPoolPtrExportData>();
    return cudaSuccess;
  });
}

// The imported pointer is memory of the pool's device like any allocation:
// copies and launches take it, cudaFree and cudaFreeAsync give it back.
extern "C" cudaError_t cudaMemPoolImportPointer(void** ptr, cudaMemPool_t memPool,
                                                cudaMemPoolPtrExportData* exportData) {
  return api([&]() -> cudaError_t {
    if (!ptr || !exportData) return cudaErrorInvalidValue;
    Call call(proto::kOpMemPoolImportPointer);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    call.args().put(*exportData);
    if (cudaError_t e = call.run()) return e;
    auto p = call.reply().get<uint64_t>();
    auto size = call.reply().get<uint64_t>();
    if (cudaError_t e = remember_allocation(call, p, size)) return e;
    *ptr = reinterpret_cast<void*>(p);
    return cudaSuccess;
  });
}

namespace {

// rgpu's pools hold device memory: a location names one device's pools when
// it is a device and the memory pinned (device) memory.
cudaError_t pool_location(const cudaMemLocation* location, cudaMemAllocationType type, int* device) {
  if (!location) return cudaErrorInvalidValue;
  if (type != cudaMemAllocationTypePinned || location->type != cudaMemLocationTypeDevice) {
    RGPU_LOG(warn, "pools of host or managed memory: not supported: memory on the server's host is not the "
                   "application's, and rgpu keeps managed memory outside pools");
    return cudaErrorNotSupported;
  }
  *device = location->id;
  return cudaSuccess;
}

// The virtual device a pool access entry names, which must be a device.
cudaError_t access_device(const cudaMemLocation& location, int* device) {
  if (location.type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
  if (!Runtime::get().device(location.id)) return cudaErrorInvalidDevice;
  *device = location.id;
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* memPool, cudaMemLocation* location,
                                                cudaMemAllocationType type) {
  return api([&]() -> cudaError_t {
    int device;
    if (cudaError_t e = pool_location(location, type, &device)) return e;
    return device_pool(proto::kOpDeviceGetDefaultMemPool, memPool, device);
  });
}

extern "C" cudaError_t cudaMemGetMemPool(cudaMemPool_t* memPool, cudaMemLocation* location,
                                         cudaMemAllocationType type) {
  return api([&]() -> cudaError_t {
    int device;
    if (cudaError_t e = pool_location(location, type, &device)) return e;
    return device_pool(proto::kOpDeviceGetMemPool, memPool, device);
  });
}

extern "C" cudaError_t cudaMemSetMemPool(cudaMemLocation* location, cudaMemAllocationType type,
                                         cudaMemPool_t memPool) {
  return api([&]() -> cudaError_t {
    int device;
    if (cudaError_t e = pool_location(location, type, &device)) return e;
    return cudaDeviceSetMemPool(device, memPool);
  });
}

// A GPU of another server can never map a pool's memory: only "no access"
// may be asked for it.
extern "C" cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const cudaMemAccessDesc* descList, size_t count) {
  return api([&]() -> cudaError_t {
    if (!descList && count) return cudaErrorInvalidValue;
    RemoteObject p;
    if (!mem_pools().find(memPool, &p)) return cudaErrorInvalidValue;
    for (size_t i = 0; i < count; ++i) {
      int device;
      if (cudaError_t e = access_device(descList[i].location, &device)) return e;
      if (!same_server(device, p.device)) {
        if (descList[i].flags != cudaMemAccessFlagsProtNone) return cudaErrorInvalidDevice;
        continue;
      }
      Call call(proto::kOpMemPoolSetAccess);
      if (cudaError_t e = to_pool(call, memPool)) return e;
      call.args().put<int32_t>(Runtime::get().device(device)->remote).put<int32_t>(descList[i].flags);
      if (cudaError_t e = call.run()) return e;
    }
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t memPool,
                                            cudaMemLocation* location) {
  return api([&]() -> cudaError_t {
    if (!flags || !location) return cudaErrorInvalidValue;
    RemoteObject p;
    if (!mem_pools().find(memPool, &p)) return cudaErrorInvalidValue;
    int device;
    if (cudaError_t e = access_device(*location, &device)) return e;
    if (!same_server(device, p.device)) {
      *flags = cudaMemAccessFlagsProtNone;
      return cudaSuccess;
    }
    Call call(proto::kOpMemPoolGetAccess);
    if (cudaError_t e = to_pool(call, memPool)) return e;
    call.args().put<int32_t>(Runtime::get().device(device)->remote);
    if (cudaError_t e = call.quiet().run()) return e;
    *flags = static_cast<cudaMemAccessFlags>(call.reply().get<int32_t>());
    return cudaSuccess;
  });
}
