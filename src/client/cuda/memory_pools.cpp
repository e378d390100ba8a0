// Stream-ordered allocation and memory pools: the runtime's paths
// (cudart/stream_ordered_memory.cpp). CUmemoryPool and cudaMemPool_t are the
// same handles, and the driver's pool structures and enums are the runtime's.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

static_assert(sizeof(CUmemPoolProps) == sizeof(cudaMemPoolProps));
static_assert(sizeof(CUmemLocation) == sizeof(cudaMemLocation));
static_assert(sizeof(CUmemAccessDesc) == sizeof(cudaMemAccessDesc));
static_assert(sizeof(CUmemPoolPtrExportData) == sizeof(cudaMemPoolPtrExportData));

cudaMemPool_t rt(CUmemoryPool p) { return reinterpret_cast<cudaMemPool_t>(p); }
cudaMemPool_t* rt(CUmemoryPool* p) { return reinterpret_cast<cudaMemPool_t*>(p); }
cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaMemLocation* rt(CUmemLocation* l) { return reinterpret_cast<cudaMemLocation*>(l); }
cudaMemAllocationType rt(CUmemAllocationType t) { return static_cast<cudaMemAllocationType>(t); }
cudaMemAllocationHandleType rt(CUmemAllocationHandleType t) { return static_cast<cudaMemAllocationHandleType>(t); }
cudaMemPoolPtrExportData* rt(CUmemPoolPtrExportData* d) { return reinterpret_cast<cudaMemPoolPtrExportData*>(d); }

}  // namespace

extern "C" CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return through_runtime([&] { return cudaMallocAsync(reinterpret_cast<void**>(dptr), bytesize, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                    CUstream hStream) {
  return through_runtime(
      [&] { return cudaMallocFromPoolAsync(reinterpret_cast<void**>(dptr), bytesize, rt(pool), rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return through_runtime([&] { return cudaFreeAsync(reinterpret_cast<void*>(dptr), rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  return through_runtime(
      [&] { return cudaMemPoolCreate(rt(pool), reinterpret_cast<const cudaMemPoolProps*>(poolProps)); });
}

extern "C" CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  return through_runtime([&] { return cudaMemPoolDestroy(rt(pool)); });
}

extern "C" CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return through_runtime([&] { return cudaMemPoolSetAttribute(rt(pool), static_cast<cudaMemPoolAttr>(attr), value); });
}

extern "C" CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return through_runtime([&] { return cudaMemPoolGetAttribute(rt(pool), static_cast<cudaMemPoolAttr>(attr), value); });
}

extern "C" CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  return through_runtime([&] { return cudaMemPoolTrimTo(rt(pool), minBytesToKeep); });
}

extern "C" CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  return through_runtime(
      [&] { return cudaMemPoolSetAccess(rt(pool), reinterpret_cast<const cudaMemAccessDesc*>(map), count); });
}

extern "C" CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool,
                                               CUmemLocation* location) {
  return through_runtime([&] {
    return cudaMemPoolGetAccess(reinterpret_cast<cudaMemAccessFlags*>(flags), rt(memPool), rt(location));
  });
}

extern "C" CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  return through_runtime([&] { return cudaDeviceGetDefaultMemPool(rt(pool_out), dev); });
}

extern "C" CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return through_runtime([&] { return cudaDeviceGetMemPool(rt(pool), dev); });
}

extern "C" CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return through_runtime([&] { return cudaDeviceSetMemPool(dev, rt(pool)); });
}

extern "C" CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location,
                                                   CUmemAllocationType type) {
  return through_runtime([&] { return cudaMemGetDefaultMemPool(rt(pool_out), rt(location), rt(type)); });
}

extern "C" CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  return through_runtime([&] { return cudaMemGetMemPool(rt(pool), rt(location), rt(type)); });
}

extern "C" CUresult CUDAAPI cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
  return through_runtime([&] { return cudaMemSetMemPool(rt(location), rt(type), rt(pool)); });
}

// Flags are 64-bit here and 32-bit in the runtime: any set bit is refused
// (they must be 0) rather than cut off.
extern "C" CUresult CUDAAPI cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool pool,
                                                             CUmemAllocationHandleType handleType,
                                                             unsigned long long flags) {
  if (flags) return through_runtime([] { return cudaErrorInvalidValue; });
  return through_runtime([&] { return cudaMemPoolExportToShareableHandle(handle_out, rt(pool), rt(handleType), 0); });
}

extern "C" CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* handle,
                                                               CUmemAllocationHandleType handleType,
                                                               unsigned long long flags) {
  if (flags) return through_runtime([] { return cudaErrorInvalidValue; });
  return through_runtime([&] { return cudaMemPoolImportFromShareableHandle(rt(pool_out), handle, rt(handleType), 0); });
}

extern "C" CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) {
  return through_runtime([&] { return cudaMemPoolExportPointer(rt(shareData_out), reinterpret_cast<void*>(ptr)); });
}

extern "C" CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool pool,
                                                   CUmemPoolPtrExportData* shareData) {
  return through_runtime(
      [&] { return cudaMemPoolImportPointer(reinterpret_cast<void**>(ptr_out), rt(pool), rt(shareData)); });
}
