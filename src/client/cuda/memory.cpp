// Device and page-locked memory, copies and memsets: the runtime's paths on
// the current context's device, with their errors as CUresult.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/graph/capture.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }
cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

// D16/D32 memsets whose bytes differ cannot use the byte memset: the
// pattern is built on the host and copied, which writes the same memory.
template <typename T>
CUresult memset_elements(CUdeviceptr dst, T value, size_t n, CUstream stream, bool async) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (dst % sizeof(T)) return CUDA_ERROR_INVALID_VALUE;
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  bool uniform = std::memcmp(bytes, bytes + 1, sizeof(T) - 1) == 0;
  if (uniform)
    return to_cu(async ? cudaMemsetAsync(ptr(dst), bytes[0], n * sizeof(T), rt(stream))
                       : cudaMemset(ptr(dst), bytes[0], n * sizeof(T)));
  if (cudaError_t e; async && captured_element_memset(rt(stream), ptr(dst), 0, value, sizeof(T), n, 1, &e))
    return to_cu(e);
  std::vector<T> pattern(n, value);
  // A pageable source is copied before cudaMemcpyAsync returns.
  return to_cu(async ? cudaMemcpyAsync(ptr(dst), pattern.data(), n * sizeof(T), cudaMemcpyHostToDevice, rt(stream))
                     : cudaMemcpy(ptr(dst), pattern.data(), n * sizeof(T), cudaMemcpyHostToDevice));
}

}  // namespace

extern "C" CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  KeepLastError keep;
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = driver_ready()) return e;
  void* p = nullptr;
  if (CUresult e = to_cu(cudaMalloc(&p, bytesize))) return e;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  return through_runtime([&] { return cudaFree(ptr(dptr)); });
}

extern "C" CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  return through_runtime([&] { return cudaMemGetInfo(free, total); });
}

extern "C" CUresult CUDAAPI cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return through_runtime([&] { return cudaMallocHost(pp, bytesize); });
}

// CU_MEMHOSTALLOC_* and cudaHostAlloc* flags have the same values.
extern "C" CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return through_runtime([&] { return cudaHostAlloc(pp, bytesize, Flags); });
}

extern "C" CUresult CUDAAPI cuMemFreeHost(void* p) {
  return through_runtime([&] { return cudaFreeHost(p); });
}

extern "C" CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return through_runtime([&] { return cudaMemcpy(ptr(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice); });
}

extern "C" CUresult CUDAAPI cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return through_runtime([&] { return cudaMemcpy(dstHost, ptr(srcDevice), ByteCount, cudaMemcpyDeviceToHost); });
}

extern "C" CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return through_runtime([&] { return cudaMemcpy(ptr(dstDevice), ptr(srcDevice), ByteCount, cudaMemcpyDeviceToDevice); });
}

extern "C" CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                                                 CUstream hStream) {
  return through_runtime([&] { return cudaMemcpyAsync(ptr(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                                 CUstream hStream) {
  return through_runtime([&] { return cudaMemcpyAsync(dstHost, ptr(srcDevice), ByteCount, cudaMemcpyDeviceToHost, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                                 CUstream hStream) {
  return through_runtime([&] { return cudaMemcpyAsync(ptr(dstDevice), ptr(srcDevice), ByteCount, cudaMemcpyDeviceToDevice, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return memset_elements(dstDevice, uc, N, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return memset_elements(dstDevice, us, N, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return memset_elements(dstDevice, ui, N, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return memset_elements(dstDevice, uc, N, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return memset_elements(dstDevice, us, N, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return memset_elements(dstDevice, ui, N, hStream, true);
}

// Unified addressing: the pointers themselves say where the memory is.
extern "C" CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return through_runtime([&] { return cudaMemcpy(ptr(dst), ptr(src), ByteCount, cudaMemcpyDefault); });
}

extern "C" CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return through_runtime([&] { return cudaMemcpyAsync(ptr(dst), ptr(src), ByteCount, cudaMemcpyDefault, rt(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  if (CUresult e = driver_ready()) return e;
  auto range = MemoryMap::get().find_device(dptr);
  if (!range) return CUDA_ERROR_NOT_FOUND;
  if (pbase) *pbase = range->base;
  if (psize) *psize = range->size;
  return CUDA_SUCCESS;
}

// CU_MEMHOSTREGISTER_* and cudaHostRegister* flags have the same values.
extern "C" CUresult CUDAAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return through_runtime([&] { return cudaHostRegister(p, bytesize, Flags); });
}

extern "C" CUresult CUDAAPI cuMemHostUnregister(void* p) {
  return through_runtime([&] { return cudaHostUnregister(p); });
}

// Zero-copy mapped host memory: over shm only (see cudart/mapped_memory.hpp).
extern "C" CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return through_runtime(
      [&] { return cudaHostGetDevicePointer(reinterpret_cast<void**>(pdptr), p, Flags); });
}

extern "C" CUresult CUDAAPI cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  return through_runtime([&] { return cudaHostGetFlags(pFlags, p); });
}
