// 3-D pitched memory: cudaMalloc3D and cudaMemset3D over the 2-D paths,
// cudaMemcpy3D and its variants over copy_3d.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "client/core/api_guard.hpp"
#include "client/core/array_objects.hpp"
#include "client/cudart/copy_3d.hpp"

using namespace rgpu::client;

extern "C" cudaError_t cudaMalloc3D(cudaPitchedPtr* pitchedDevPtr, cudaExtent extent) {
  return api([&]() -> cudaError_t {
    if (!pitchedDevPtr) return cudaErrorInvalidValue;
    size_t rows;
    if (__builtin_mul_overflow(extent.height, extent.depth, &rows)) return cudaErrorInvalidValue;
    void* p = nullptr;
    size_t pitch = 0;
    if (cudaError_t e = cudaMallocPitch(&p, &pitch, extent.width, rows)) return e;
    *pitchedDevPtr = {p, pitch, extent.width, extent.height};
    return cudaSuccess;
  });
}

namespace {

// One 2-D memset when the slices lie back to back, else one per slice.
cudaError_t memset_3d(cudaPitchedPtr p, int value, cudaExtent extent, cudaStream_t stream) {
  if (extent.width == 0 || extent.height == 0 || extent.depth == 0) return cudaSuccess;
  if (extent.width > p.pitch || (extent.depth > 1 && extent.height > p.ysize)) return cudaErrorInvalidValue;
  if (extent.depth == 1 || extent.height == p.ysize)
    return cudaMemset2DAsync(p.ptr, p.pitch, value, extent.width, extent.height * extent.depth, stream);
  for (size_t z = 0; z < extent.depth; ++z)
    if (cudaError_t e = cudaMemset2DAsync(static_cast<char*>(p.ptr) + z * p.pitch * p.ysize, p.pitch, value,
                                          extent.width, extent.height, stream))
      return e;
  return cudaSuccess;
}

cudaMemcpy3DParms from_peer(const cudaMemcpy3DPeerParms& p) {
  cudaMemcpy3DParms c{};
  c.srcArray = p.srcArray;
  c.srcPos = p.srcPos;
  c.srcPtr = p.srcPtr;
  c.dstArray = p.dstArray;
  c.dstPos = p.dstPos;
  c.dstPtr = p.dstPtr;
  c.extent = p.extent;
  c.kind = cudaMemcpyDeviceToDevice;  // every side of a peer copy is on a device; pointers name theirs
  return c;
}

// One operand of cudaMemcpy3DBatchAsync; `element` is the array side's
// element size (1 when there is none), in which pointer rows are counted.
cudaError_t batch_end(const cudaMemcpy3DOperand& o, const cudaExtent& extent, size_t element, bool is_src,
                      CopyEnd* out) {
  if (o.type == cudaMemcpyOperandTypeArray) {
    size_t el;
    return array_end(o.op.array.array, o.op.array.offset.x, o.op.array.offset.y, o.op.array.offset.z, out, &el);
  }
  if (o.type != cudaMemcpyOperandTypePointer) return cudaErrorInvalidValue;
  size_t row = (o.op.ptr.rowLength ? o.op.ptr.rowLength : extent.width) * element;
  size_t rows = o.op.ptr.layerHeight ? o.op.ptr.layerHeight : extent.height;
  return pointer_end(o.op.ptr.ptr, row, rows, cudaMemcpyDefault, is_src, out);
}

size_t operand_element(const cudaMemcpy3DOperand& o) {
  if (o.type != cudaMemcpyOperandTypeArray) return 0;
  auto a = arrays().find(o.op.array.array);
  return a ? a->element : 0;
}

}  // namespace

namespace rgpu::client {

cudaError_t copy_3d_batch(size_t count, cudaMemcpy3DBatchOp* ops, unsigned long long flags, cudaStream_t stream,
                          size_t* fail_idx) {
  if (fail_idx) *fail_idx = SIZE_MAX;
  if (!ops || count == 0 || flags) return cudaErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    if (fail_idx) *fail_idx = i;
    const cudaMemcpy3DBatchOp& op = ops[i];
    const cudaExtent& x = op.extent;
    if (x.width == 0 || x.height == 0 || x.depth == 0) return cudaErrorInvalidValue;
    size_t element = std::max(operand_element(op.src), operand_element(op.dst));
    if (element == 0) element = 1;
    CopyEnd src, dst;
    if (cudaError_t e = batch_end(op.src, x, element, true, &src)) return e;
    if (cudaError_t e = batch_end(op.dst, x, element, false, &dst)) return e;
    if (cudaError_t e = copy_3d(dst, src, x.width * element, x.height, x.depth, stream, true)) return e;
  }
  if (fail_idx) *fail_idx = SIZE_MAX;
  return cudaSuccess;
}

}  // namespace rgpu::client

extern "C" cudaError_t cudaMemset3D(cudaPitchedPtr pitchedDevPtr, int value, cudaExtent extent) {
  return api([&] { return memset_3d(pitchedDevPtr, value, extent, nullptr); });
}

extern "C" cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitchedDevPtr, int value, cudaExtent extent,
                                         cudaStream_t stream) {
  return api([&] { return memset_3d(pitchedDevPtr, value, extent, stream); });
}

extern "C" cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  return api([&] { return copy_3d_parms(p, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
  return api([&] { return copy_3d_parms(p, stream, true); });
}

extern "C" cudaError_t cudaMemcpy3DPeer(const cudaMemcpy3DPeerParms* p) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    cudaMemcpy3DParms c = from_peer(*p);
    return copy_3d_parms(&c, nullptr, false);
  });
}

extern "C" cudaError_t cudaMemcpy3DPeerAsync(const cudaMemcpy3DPeerParms* p, cudaStream_t stream) {
  return api([&]() -> cudaError_t {
    if (!p) return cudaErrorInvalidValue;
    cudaMemcpy3DParms c = from_peer(*p);
    return copy_3d_parms(&c, stream, true);
  });
}

extern "C" cudaError_t cudaMemcpy3DBatchAsync(size_t numOps, cudaMemcpy3DBatchOp* opList, unsigned long long flags,
                                              cudaStream_t stream) {
  return api([&] { return copy_3d_batch(numOps, opList, flags, stream, nullptr); });
}
