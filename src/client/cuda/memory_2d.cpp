// Pitched memory: allocations, 2D copies and 2D memsets, on the runtime's
// paths; copies with a CUDA array side go to array_copies.cpp.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/graph/capture.hpp"
#include "client/cuda/array_copies.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

struct Endpoint {
  void* ptr;
  bool host;
};

// The first byte of one side of a CUDA_MEMCPY2D.
CUresult endpoint(CUmemorytype type, const void* host, CUdeviceptr device, size_t x, size_t y, size_t pitch,
                  Endpoint* out) {
  size_t offset = y * pitch + x;
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      if (!host) return CUDA_ERROR_INVALID_VALUE;
      *out = {static_cast<char*>(const_cast<void*>(host)) + offset, true};
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      *out = {reinterpret_cast<char*>(device) + offset, false};
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult copy_2d(const CUDA_MEMCPY2D* c, CUstream stream, bool async) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return copy_2d_with_array(c, stream, async);
  Endpoint src, dst;
  if (CUresult e = endpoint(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcPitch, &src))
    return e;
  if (CUresult e = endpoint(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstPitch, &dst))
    return e;
  // Unified pointers say themselves where they are.
  bool unified = c->srcMemoryType == CU_MEMORYTYPE_UNIFIED || c->dstMemoryType == CU_MEMORYTYPE_UNIFIED;
  cudaMemcpyKind kind = unified                 ? cudaMemcpyDefault
                        : src.host && dst.host  ? cudaMemcpyHostToHost
                        : src.host              ? cudaMemcpyHostToDevice
                        : dst.host              ? cudaMemcpyDeviceToHost
                                                : cudaMemcpyDeviceToDevice;
  return to_cu(async ? cudaMemcpy2DAsync(dst.ptr, c->dstPitch, src.ptr, c->srcPitch, c->WidthInBytes, c->Height,
                                         kind, reinterpret_cast<cudaStream_t>(stream))
                     : cudaMemcpy2D(dst.ptr, c->dstPitch, src.ptr, c->srcPitch, c->WidthInBytes, c->Height, kind));
}

// D2D16/D2D32 memsets: the byte memset when the value's bytes are all
// alike, else a pattern built on the host and copied into the rows.
template <typename T>
CUresult memset_2d_elements(CUdeviceptr dst, size_t pitch, T value, size_t width, size_t height, CUstream stream,
                            bool async) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (dst % sizeof(T) || (height > 1 && pitch % sizeof(T))) return CUDA_ERROR_INVALID_VALUE;
  void* p = reinterpret_cast<void*>(dst);
  auto s = reinterpret_cast<cudaStream_t>(stream);
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  if (std::memcmp(bytes, bytes + 1, sizeof(T) - 1) == 0)
    return to_cu(async ? cudaMemset2DAsync(p, pitch, bytes[0], width * sizeof(T), height, s)
                       : cudaMemset2D(p, pitch, bytes[0], width * sizeof(T), height));
  if (cudaError_t e; async && captured_element_memset(s, p, pitch, value, sizeof(T), width, height, &e))
    return to_cu(e);
  std::vector<T> pattern(width * height, value);
  size_t row = width * sizeof(T);
  // A pageable source is copied before cudaMemcpy2DAsync returns.
  return to_cu(async ? cudaMemcpy2DAsync(p, pitch, pattern.data(), row, row, height, cudaMemcpyHostToDevice, s)
                     : cudaMemcpy2D(p, pitch, pattern.data(), row, row, height, cudaMemcpyHostToDevice));
}

}  // namespace

extern "C" CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                               unsigned int ElementSizeBytes) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  if (CUresult e = to_cu(cudaMallocPitch(&p, pPitch, WidthInBytes, Height))) return e;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) { return copy_2d(pCopy, nullptr, false); }

extern "C" CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return copy_2d(pCopy, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return copy_2d(pCopy, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                            size_t Height) {
  return through_runtime([&] { return cudaMemset2D(reinterpret_cast<void*>(dstDevice), dstPitch, uc, Width, Height); });
}

extern "C" CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                              size_t Height, CUstream hStream) {
  return through_runtime([&] { return cudaMemset2DAsync(reinterpret_cast<void*>(dstDevice), dstPitch, uc, Width, Height,
                                 reinterpret_cast<cudaStream_t>(hStream)); });
}

extern "C" CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                             size_t Height) {
  return memset_2d_elements(dstDevice, dstPitch, us, Width, Height, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                               size_t Width, size_t Height, CUstream hStream) {
  return memset_2d_elements(dstDevice, dstPitch, us, Width, Height, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                             size_t Height) {
  return memset_2d_elements(dstDevice, dstPitch, ui, Width, Height, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                               size_t Width, size_t Height, CUstream hStream) {
  return memset_2d_elements(dstDevice, dstPitch, ui, Width, Height, hStream, true);
}
