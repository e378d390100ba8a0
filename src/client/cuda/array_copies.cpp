// Driver-API array and 3-D copies: cuMemcpyHtoA and the other linear array
// copies, cuMemcpy3D (Peer, Batch), and cuMemcpy2D with an array side, all on
// the runtime's copy_3d path.
#include "client/cuda/array_copies.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

#include "client/cuda/driver_errors.hpp"
#include "client/cudart/copy_3d.hpp"
#include "protocol/channel_format.hpp"

using namespace rgpu::client;

namespace {

cudaStream_t rt(CUstream s) { return reinterpret_cast<cudaStream_t>(s); }

// count bytes at a byte offset into an array: the driver's linear array
// copies stay within the array's first row (a whole 2-D array is
// CUDA_ERROR_INVALID_VALUE, checked on the H100).
cudaError_t array_at_offset(CUarray array, size_t offset, size_t count, CopyEnd* out) {
  cudaChannelFormatDesc desc;
  cudaExtent extent;
  auto a = reinterpret_cast<cudaArray_t>(array);
  if (cudaError_t e = cudaArrayGetInfo(&desc, &extent, nullptr, a)) return e;
  size_t row = rgpu::proto::channel_element_size(desc) * extent.width;
  if (offset > row || count > row - offset) return cudaErrorInvalidValue;
  size_t element;
  if (cudaError_t e = array_end(a, 0, 0, 0, out, &element)) return e;
  out->x = offset;
  return cudaSuccess;
}

CopyEnd memory_end(const void* p, bool device) {
  return {device ? CopyEnd::device : CopyEnd::host, const_cast<void*>(p)};
}

CUresult linear(CUarray dst_array, size_t dst_offset, const void* dst, bool dst_device, CUarray src_array,
                size_t src_offset, const void* src, bool src_device, size_t count, CUstream stream, bool async) {
  return through_runtime([&]() -> cudaError_t {
    CopyEnd d = memory_end(dst, dst_device), s = memory_end(src, src_device);
    if (dst_array)
      if (cudaError_t e = array_at_offset(dst_array, dst_offset, count, &d)) return e;
    if (src_array)
      if (cudaError_t e = array_at_offset(src_array, src_offset, count, &s)) return e;
    return copy_across_rows(d, s, count, rt(stream), async);
  });
}

// One side of a CUDA_MEMCPY2D/3D/3D_PEER.
cudaError_t end_of(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, size_t pitch, size_t rows,
                   bool is_src, CopyEnd* out) {
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      *out = {CopyEnd::host, const_cast<void*>(host), pitch, rows};
      return host ? cudaSuccess : cudaErrorInvalidValue;
    case CU_MEMORYTYPE_DEVICE:
      *out = {CopyEnd::device, reinterpret_cast<void*>(device), pitch, rows};
      return device ? cudaSuccess : cudaErrorInvalidValue;
    case CU_MEMORYTYPE_UNIFIED:
      return pointer_end(reinterpret_cast<void*>(device), pitch, rows, cudaMemcpyDefault, is_src, out);
    case CU_MEMORYTYPE_ARRAY: {
      size_t element;
      return array_end(reinterpret_cast<cudaArray_t>(array), 0, 0, 0, out, &element);
    }
  }
  return cudaErrorInvalidValue;
}

// CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER name their fields alike.
template <typename Copy>
CUresult copy_3d_struct(const Copy* c, CUstream stream, bool async) {
  return through_runtime([&]() -> cudaError_t {
    if (!c || c->srcLOD || c->dstLOD) return cudaErrorInvalidValue;
    CopyEnd src, dst;
    if (cudaError_t e = end_of(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, c->srcHeight,
                               true, &src))
      return e;
    if (cudaError_t e = end_of(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, c->dstHeight,
                               false, &dst))
      return e;
    src.x = c->srcXInBytes, src.y = c->srcY, src.z = c->srcZ;
    dst.x = c->dstXInBytes, dst.y = c->dstY, dst.z = c->dstZ;
    return copy_3d(dst, src, c->WidthInBytes, c->Height, c->Depth, rt(stream), async);
  });
}

}  // namespace

namespace rgpu::client {

CUresult copy_2d_with_array(const CUDA_MEMCPY2D* c, CUstream stream, bool async) {
  return through_runtime([&]() -> cudaError_t {
    CopyEnd src, dst;
    if (cudaError_t e = end_of(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, 0, true, &src))
      return e;
    if (cudaError_t e = end_of(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, 0, false, &dst))
      return e;
    src.x = c->srcXInBytes, src.y = c->srcY;
    dst.x = c->dstXInBytes, dst.y = c->dstY;
    return copy_3d(dst, src, c->WidthInBytes, c->Height, 1, rt(stream), async);
  });
}

}  // namespace rgpu::client

extern "C" CUresult CUDAAPI cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount) {
  return linear(dstArray, dstOffset, nullptr, false, nullptr, 0, srcHost, false, ByteCount, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                                 size_t ByteCount, CUstream hStream) {
  return linear(dstArray, dstOffset, nullptr, false, nullptr, 0, srcHost, false, ByteCount, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemcpyAtoH_v2(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount) {
  return linear(nullptr, 0, dstHost, false, srcArray, srcOffset, nullptr, false, ByteCount, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpyAtoHAsync_v2(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                                 CUstream hStream) {
  return linear(nullptr, 0, dstHost, false, srcArray, srcOffset, nullptr, false, ByteCount, hStream, true);
}

extern "C" CUresult CUDAAPI cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                                            size_t ByteCount) {
  return linear(dstArray, dstOffset, nullptr, false, nullptr, 0, reinterpret_cast<void*>(srcDevice), true, ByteCount,
                nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                                            size_t ByteCount) {
  return linear(nullptr, 0, reinterpret_cast<void*>(dstDevice), true, srcArray, srcOffset, nullptr, false, ByteCount,
                nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                            size_t ByteCount) {
  return linear(dstArray, dstOffset, nullptr, false, srcArray, srcOffset, nullptr, false, ByteCount, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D* pCopy) { return copy_3d_struct(pCopy, nullptr, false); }

extern "C" CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return copy_3d_struct(pCopy, hStream, true);
}

// Pointers name their device themselves: the contexts add nothing.
extern "C" CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* pCopy) {
  return copy_3d_struct(pCopy, nullptr, false);
}

extern "C" CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) {
  return copy_3d_struct(pCopy, hStream, true);
}

// CUDA_MEMCPY3D_BATCH_OP is cudaMemcpy3DBatchOp field for field (operand
// types, access orders and memory locations share their numbering).
static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == sizeof(cudaMemcpy3DBatchOp));
static_assert(offsetof(CUDA_MEMCPY3D_BATCH_OP, extent) == offsetof(cudaMemcpy3DBatchOp, extent));
static_assert(offsetof(CUDA_MEMCPY3D_BATCH_OP, flags) == offsetof(cudaMemcpy3DBatchOp, flags));
static_assert(sizeof(CUmemcpy3DOperand) == sizeof(cudaMemcpy3DOperand));

extern "C" CUresult CUDAAPI cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                                    unsigned long long flags, CUstream hStream) {
  return through_runtime([&] {
    return cudaMemcpy3DBatchAsync(numOps, reinterpret_cast<cudaMemcpy3DBatchOp*>(opList), flags, rt(hStream));
  });
}

// The CUDA 12.8 binding, which also names the copy that failed.
extern "C" CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                                                 unsigned long long flags, CUstream hStream) {
  return through_runtime([&] {
    return copy_3d_batch(numOps, reinterpret_cast<cudaMemcpy3DBatchOp*>(opList), flags, rt(hStream), failIdx);
  });
}
