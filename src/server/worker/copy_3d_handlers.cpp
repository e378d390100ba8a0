// 3-D copies between host data, pitched device memory and CUDA arrays (every
// array copy of both APIs comes here). Host data travels as packed rows of
// `width` bytes through the staging pipeline; each side is checked against
// the session's allocations or arrays, extents included, before the backend
// sees it.
#include <algorithm>

#include "protocol/copy_3d_wire.hpp"
#include "protocol/ops.hpp"
#include "server/worker/copy_pipeline.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/reply.hpp"

namespace rgpu::server {
namespace {

// A checked side: the backend's view, and the bytes of one element (1 for
// pitched memory).
struct Side {
  CopySide side;
  size_t element = 1;
};

bool fits(size_t pos, size_t n, size_t limit) { return pos <= limit && n <= limit - pos; }

int32_t check_array_side(SessionContext& s, const proto::CopySideWire& w, const proto::CopyExtentWire& x,
                         Side* out) {
  ArrayRecord r;
  if (int32_t e = check_array_region(s.arrays, w.array, w.x, w.y, w.z, x.width, x.height, x.depth, &r)) return e;
  out->side = {w.array, nullptr, 0, 0, {w.x / r.element, w.y, w.z}};
  out->element = r.element;
  return cudaSuccess;
}

// Pitched device memory: every byte from the first row's start to the last
// row's end must lie in one of the session's allocations.
int32_t check_memory_side(SessionContext& s, const proto::CopySideWire& w, const proto::CopyExtentWire& x,
                          Side* out) {
  if (!fits(w.x, x.width, w.pitch)) return cudaErrorInvalidPitchValue;
  if (x.depth > 1 && !fits(w.y, x.height, w.rows)) return cudaErrorInvalidValue;
  size_t slice, first, span, tail;
  if (__builtin_mul_overflow(w.pitch, w.rows, &slice) || __builtin_mul_overflow(w.z, slice, &first) ||
      __builtin_mul_overflow(w.y, w.pitch, &tail) || __builtin_add_overflow(first, tail, &first) ||
      __builtin_add_overflow(first, w.x, &first) || __builtin_mul_overflow(x.depth - 1, slice, &span) ||
      __builtin_mul_overflow(x.height - 1, w.pitch, &tail) || __builtin_add_overflow(span, tail, &span) ||
      __builtin_add_overflow(span, x.width, &span) || __builtin_add_overflow(w.ptr, first, &first))
    return cudaErrorInvalidValue;
  if (!s.owns(first, span)) return cudaErrorInvalidValue;
  // The slice offset goes into the pointer, and a single slice gets the rows
  // it uses, so that the backend's copy (CUDA checks rows per slice even
  // for one slice) addresses exactly the bytes checked here.
  size_t rows = x.depth > 1 ? w.rows : std::max<size_t>(w.rows, w.y + x.height);
  out->side = {0, reinterpret_cast<void*>(w.ptr + w.z * slice), w.pitch, rows, {w.x, w.y, 0}};
  return cudaSuccess;
}

int32_t check_side(SessionContext& s, const proto::CopySideWire& w, const proto::CopyExtentWire& x, Side* out) {
  return w.array ? check_array_side(s, w, x, out) : check_memory_side(s, w, x, out);
}

int32_t read_extent(Request& req, proto::CopyExtentWire* x, size_t* bytes) {
  *x = req.args.get<proto::CopyExtentWire>();
  if (x->width == 0 || x->height == 0 || x->depth == 0) return cudaErrorInvalidValue;
  if (__builtin_mul_overflow(x->width, x->height, bytes) || __builtin_mul_overflow(*bytes, x->depth, bytes))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Copies the rows [offset / width, (offset + len) / width) of the whole
// transfer between `buffer` (packed rows) and the device side: whole slices
// at once where the block holds them.
int32_t copy_rows(SessionContext& s, const Side& device, const proto::CopyExtentWire& x, void* buffer, size_t offset,
                  size_t len, bool to_device, Handle stream) {
  size_t row = offset / x.width, end = (offset + len) / x.width;
  auto* p = static_cast<uint8_t*>(buffer);
  size_t width = device.side.array ? x.width / device.element : x.width;
  while (row < end) {
    size_t z = row / x.height, y = row % x.height;
    size_t rows = std::min(x.height - y, end - row), slices = 1;
    if (y == 0 && end - row >= x.height) {
      rows = x.height;
      slices = (end - row) / x.height;
    }
    CopySide host{0, p, x.width, rows, {}};
    CopySide dev = device.side;
    dev.pos.y += y;
    dev.pos.z += z;
    cudaExtent extent{width, rows, slices};
    int32_t e = to_device ? s.backend().arrays().memcpy3d_async(dev, host, extent, cudaMemcpyHostToDevice, stream)
                          : s.backend().arrays().memcpy3d_async(host, dev, extent, cudaMemcpyDeviceToHost, stream);
    if (e) return e;
    p += rows * slices * x.width;
    row += rows * slices;
  }
  return cudaSuccess;
}

int32_t memcpy3d_htod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<proto::CopySideWire>();
  proto::CopyExtentWire x;
  size_t bytes;
  if (int32_t e = read_extent(req, &x, &bytes)) return e;
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  Side d;
  if (int32_t e = check_side(s, dst, x, &d)) return e;
  if (bytes != req.payload_left() || x.width > kMaxStagedRow) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  return pipeline_in(s, req, bytes, x.width, stream, sync, [&](void* buf, size_t off, size_t len) {
    return copy_rows(s, d, x, buf, off, len, true, stream);
  });
}

int32_t memcpy3d_dtoh(SessionContext& s, Request& req, proto::Writer&) {
  auto src = req.args.get<proto::CopySideWire>();
  proto::CopyExtentWire x;
  size_t bytes;
  if (int32_t e = read_extent(req, &x, &bytes)) return e;
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  Side d;
  if (int32_t e = check_side(s, src, x, &d)) return e;
  if (x.width > kMaxStagedRow) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  begin_streamed_reply(req.lane(), bytes);
  pipeline_out(s, req, bytes, x.width, stream, [&](void* buf, size_t off, size_t len) {
    return copy_rows(s, d, x, buf, off, len, false, stream);
  });
  return cudaSuccess;
}

int32_t memcpy3d_dtod(SessionContext& s, Request& req, proto::Writer&) {
  auto dst = req.args.get<proto::CopySideWire>();
  auto src = req.args.get<proto::CopySideWire>();
  proto::CopyExtentWire x;
  size_t bytes;
  if (int32_t e = read_extent(req, &x, &bytes)) return e;
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  req.args.expect_end();
  Side d, sr;
  if (int32_t e = check_side(s, dst, x, &d)) return e;
  if (int32_t e = check_side(s, src, x, &sr)) return e;
  if (d.side.array && sr.side.array && d.element != sr.element) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  size_t element = d.side.array ? d.element : sr.element;
  cudaExtent extent{x.width / element, x.height, x.depth};
  if (int32_t e = s.backend().arrays().memcpy3d_async(d.side, sr.side, extent, cudaMemcpyDeviceToDevice, stream))
    return e;
  return sync ? s.backend().stream_synchronize(stream) : cudaSuccess;
}

}  // namespace

void register_copy_3d_handlers(Dispatcher& d) {
  d.add(proto::kOpMemcpy3DHtoD, memcpy3d_htod);
  d.add(proto::kOpMemcpy3DDtoH, memcpy3d_dtoh);
  d.add(proto::kOpMemcpy3DDtoD, memcpy3d_dtod);
}

}  // namespace rgpu::server
