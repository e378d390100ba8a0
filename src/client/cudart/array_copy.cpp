// Copies into, out of and between CUDA arrays (the cudaMemcpy*Array* family),
// all through copy_3d. Offsets and widths of these calls are in bytes.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "client/core/api_guard.hpp"
#include "client/core/array_objects.hpp"
#include "client/cudart/copy_3d.hpp"

using namespace rgpu::client;

namespace rgpu::client {
namespace {

// Bytes per row of an array end; pointer ends have no rows of their own.
size_t row_bytes(const CopyEnd& e) {
  if (e.kind != CopyEnd::array) return SIZE_MAX;
  auto a = arrays().find(const_cast<cudaArray_t>(e.arr));
  return a ? a->element * a->extent.width : 0;  // 0: freed meanwhile, refused below
}

}  // namespace

// The legacy linear copies run `count` bytes on from the offset, row after
// row: pieces that stay inside a row of every array side, whole rows at once
// where both sides allow.
cudaError_t copy_across_rows(CopyEnd dst, CopyEnd src, size_t count, cudaStream_t stream, bool async) {
  const size_t dst_row = row_bytes(dst), src_row = row_bytes(src);
  while (count) {
    size_t n = std::min({count, dst_row - std::min(dst.x, dst_row), src_row - std::min(src.x, src_row)});
    if (n == 0) return cudaErrorInvalidValue;  // an offset past the end of a row
    size_t rows = 1;
    size_t row = std::min(dst_row, src_row);
    bool whole = (dst.kind != CopyEnd::array || dst.x == 0) && (src.kind != CopyEnd::array || src.x == 0);
    if (whole && row != SIZE_MAX && (dst_row == src_row || dst_row == SIZE_MAX || src_row == SIZE_MAX) &&
        count >= row) {
      n = row;
      rows = count / row;
    }
    for (CopyEnd* e : {&dst, &src})
      if (e->kind != CopyEnd::array) e->pitch = n;
    if (cudaError_t e = copy_3d(dst, src, n, rows, 1, stream, async)) return e;
    for (CopyEnd* e : {&dst, &src}) {
      if (e->kind != CopyEnd::array) {
        e->ptr = static_cast<char*>(e->ptr) + n * rows;
      } else if (rows > 1) {
        e->y += rows;
      } else if ((e->x += n) == row_bytes(*e)) {
        e->x = 0;
        ++e->y;
      }
    }
    count -= n * rows;
  }
  return cudaSuccess;
}

}  // namespace rgpu::client

namespace {

cudaError_t array_at(cudaArray_const_t array, size_t x_bytes, size_t y, CopyEnd* out) {
  size_t element;
  if (cudaError_t e = array_end(array, 0, y, 0, out, &element)) return e;
  out->x = x_bytes;
  return cudaSuccess;
}

cudaError_t to_array(cudaArray_t dst, size_t w, size_t h, const void* src, size_t count, cudaMemcpyKind kind,
                     cudaStream_t stream, bool async) {
  CopyEnd d, s;
  if (cudaError_t e = array_at(dst, w, h, &d)) return e;
  if (cudaError_t e = pointer_end(const_cast<void*>(src), count, 0, kind, true, &s)) return e;
  return copy_across_rows(d, s, count, stream, async);
}

cudaError_t from_array(void* dst, cudaArray_const_t src, size_t w, size_t h, size_t count, cudaMemcpyKind kind,
                       cudaStream_t stream, bool async) {
  CopyEnd d, s;
  if (cudaError_t e = array_at(src, w, h, &s)) return e;
  if (cudaError_t e = pointer_end(dst, count, 0, kind, false, &d)) return e;
  return copy_across_rows(d, s, count, stream, async);
}

cudaError_t to_array_2d(cudaArray_t dst, size_t w, size_t h, const void* src, size_t spitch, size_t width,
                        size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  CopyEnd d, s;
  if (cudaError_t e = array_at(dst, w, h, &d)) return e;
  if (cudaError_t e = pointer_end(const_cast<void*>(src), spitch, height, kind, true, &s)) return e;
  return copy_3d(d, s, width, height, 1, stream, async);
}

cudaError_t from_array_2d(void* dst, size_t dpitch, cudaArray_const_t src, size_t w, size_t h, size_t width,
                          size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  CopyEnd d, s;
  if (cudaError_t e = array_at(src, w, h, &s)) return e;
  if (cudaError_t e = pointer_end(dst, dpitch, height, kind, false, &d)) return e;
  return copy_3d(d, s, width, height, 1, stream, async);
}

// Both sides are arrays: the kind can only say device to device.
cudaError_t array_kind(cudaMemcpyKind kind) {
  return kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidMemcpyDirection;
}

}  // namespace

extern "C" cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                         size_t count, cudaMemcpyKind kind) {
  return api([&] { return to_array(dst, wOffset, hOffset, src, count, kind, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                              size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return api([&] { return to_array(dst, wOffset, hOffset, src, count, kind, stream, true); });
}

extern "C" cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                           size_t count, cudaMemcpyKind kind) {
  return api([&] { return from_array(dst, src, wOffset, hOffset, count, kind, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                                size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return api([&] { return from_array(dst, src, wOffset, hOffset, count, kind, stream, true); });
}

extern "C" cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                              cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                              size_t count, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    if (cudaError_t e = array_kind(kind)) return e;
    CopyEnd d, s;
    if (cudaError_t e = array_at(dst, wOffsetDst, hOffsetDst, &d)) return e;
    if (cudaError_t e = array_at(src, wOffsetSrc, hOffsetSrc, &s)) return e;
    return copy_across_rows(d, s, count, nullptr, false);
  });
}

extern "C" cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                           size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  return api([&] { return to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                                size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  return api([&] { return to_array_2d(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, true); });
}

extern "C" cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                             size_t hOffset, size_t width, size_t height, cudaMemcpyKind kind) {
  return api([&] { return from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind, nullptr, false); });
}

extern "C" cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                                  size_t hOffset, size_t width, size_t height, cudaMemcpyKind kind,
                                                  cudaStream_t stream) {
  return api([&] { return from_array_2d(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, true); });
}

extern "C" cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                                cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                                size_t width, size_t height, cudaMemcpyKind kind) {
  return api([&]() -> cudaError_t {
    if (cudaError_t e = array_kind(kind)) return e;
    CopyEnd d, s;
    if (cudaError_t e = array_at(dst, wOffsetDst, hOffsetDst, &d)) return e;
    if (cudaError_t e = array_at(src, wOffsetSrc, hOffsetSrc, &s)) return e;
    return copy_3d(d, s, width, height, 1, nullptr, false);
  });
}
