// Managed memory: the runtime's (cudart/managed_memory.hpp). The driver's
// locations, advice and range attributes are the runtime's.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

static_assert(sizeof(CUmemLocation) == sizeof(cudaMemLocation));

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
void** ptrs(CUdeviceptr* p) { return reinterpret_cast<void**>(p); }
cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }
cudaMemLocation rt(CUmemLocation l) { return {static_cast<cudaMemLocationType>(l.type), l.id}; }
cudaMemLocation* rt(CUmemLocation* l) { return reinterpret_cast<cudaMemLocation*>(l); }

// The legacy bindings name a device, or CU_DEVICE_CPU for the host.
cudaMemLocation device_location(CUdevice device) {
  if (device == CU_DEVICE_CPU) return {cudaMemLocationTypeHost, 0};
  return {cudaMemLocationTypeDevice, device};
}

}  // namespace

extern "C" CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  return through_runtime([&] { return cudaMallocManaged(reinterpret_cast<void**>(dptr), bytesize, flags); });
}

extern "C" CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                           CUmemLocation location) {
  return through_runtime(
      [&] { return cudaMemAdvise(ptr(devPtr), count, static_cast<cudaMemoryAdvise>(advice), rt(location)); });
}

extern "C" CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  return through_runtime([&] {
    return cudaMemAdvise(ptr(devPtr), count, static_cast<cudaMemoryAdvise>(advice), device_location(device));
  });
}

extern "C" CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                                  unsigned int flags, CUstream hStream) {
  return through_runtime([&] { return cudaMemPrefetchAsync(ptr(devPtr), count, rt(location), flags, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                               CUstream hStream) {
  return through_runtime(
      [&] { return cudaMemPrefetchAsync(ptr(devPtr), count, device_location(dstDevice), 0, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                    CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                                    size_t numPrefetchLocs, unsigned long long flags,
                                                    CUstream hStream) {
  return through_runtime([&] {
    return cudaMemPrefetchBatchAsync(ptrs(dptrs), sizes, count, rt(prefetchLocs), prefetchLocIdxs, numPrefetchLocs,
                                     flags, rt(hStream));
  });
}

extern "C" CUresult CUDAAPI cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                   unsigned long long flags, CUstream hStream) {
  return through_runtime([&] { return cudaMemDiscardBatchAsync(ptrs(dptrs), sizes, count, flags, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                                              CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                                              size_t numPrefetchLocs, unsigned long long flags,
                                                              CUstream hStream) {
  return through_runtime([&] {
    return cudaMemDiscardAndPrefetchBatchAsync(ptrs(dptrs), sizes, count, rt(prefetchLocs), prefetchLocIdxs,
                                               numPrefetchLocs, flags, rt(hStream));
  });
}

extern "C" CUresult CUDAAPI cuMemRangeGetAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute,
                                                   CUdeviceptr devPtr, size_t count) {
  return through_runtime([&] {
    return cudaMemRangeGetAttribute(data, dataSize, static_cast<cudaMemRangeAttribute>(attribute), ptr(devPtr),
                                    count);
  });
}

extern "C" CUresult CUDAAPI cuMemRangeGetAttributes(void** data, size_t* dataSizes, CUmem_range_attribute* attributes,
                                                    size_t numAttributes, CUdeviceptr devPtr, size_t count) {
  return through_runtime([&] {
    return cudaMemRangeGetAttributes(data, dataSizes, reinterpret_cast<cudaMemRangeAttribute*>(attributes),
                                     numAttributes, ptr(devPtr), count);
  });
}

extern "C" CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                                   unsigned int flags) {
  return through_runtime([&] { return cudaStreamAttachMemAsync(rt(hStream), ptr(dptr), length, flags); });
}
