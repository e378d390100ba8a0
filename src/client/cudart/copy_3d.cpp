#include "client/cudart/copy_3d.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/graph/capture.hpp"
#include "client/core/array_objects.hpp"
#include "client/cudart/copy_engine.hpp"
#include "protocol/copy_3d_wire.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

// A device side made ready for the wire, with the device that owns it.
struct Resolved {
  proto::CopySideWire wire;
  int device;
};

cudaError_t resolve(const CopyEnd& e, size_t width, size_t height, size_t depth, Resolved* out) {
  if (e.kind == CopyEnd::array) {
    auto a = arrays().find(const_cast<cudaArray_t>(e.arr));
    if (!a) return cudaErrorInvalidResourceHandle;
    // The region must lie in the array: checked before a host row of the
    // copy is touched, as CUDA does.
    if (!array_holds(*a, e.x, e.y, e.z, width, height, depth)) return cudaErrorInvalidValue;
    out->wire = {a->remote, 0, 0, 0, e.x, e.y, e.z};
    out->device = a->device;
    return cudaSuccess;
  }
  // The region's first byte names the device; the server checks the rest.
  uint64_t first = reinterpret_cast<uint64_t>(e.ptr) + e.z * e.pitch * e.rows + e.y * e.pitch + e.x;
  size_t span = (depth - 1) * e.pitch * e.rows + (height - 1) * e.pitch + width;
  auto r = MemoryMap::get().find_device(first, span);
  if (!r) return cudaErrorInvalidValue;
  out->wire = {0, reinterpret_cast<uint64_t>(e.ptr), e.pitch, e.rows, e.x, e.y, e.z};
  out->device = r->device;
  return cudaSuccess;
}

uint8_t* host_row(const CopyEnd& e, size_t y, size_t z) {
  return static_cast<uint8_t*>(e.ptr) + (e.z + z) * e.pitch * e.rows + (e.y + y) * e.pitch + e.x;
}

CopyNodeSide node_side(const CopyEnd& e) {
  if (e.kind == CopyEnd::array) return {nullptr, 0, 0, e.arr, e.x, e.y, e.z};
  return {host_row(e, 0, 0), e.pitch, e.rows};
}

// True when the host side's rows lie back to back.
bool packed(const CopyEnd& e, size_t width, size_t height, size_t depth) {
  return e.pitch == width && (depth == 1 || e.rows == height);
}

cudaError_t host_to_host(const CopyEnd& dst, const CopyEnd& src, size_t width, size_t height, size_t depth,
                         cudaStream_t stream, bool async) {
  if (async)
    if (cudaError_t e = cudaStreamSynchronize(stream)) return e;
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < height; ++y) std::memmove(host_row(dst, y, z), host_row(src, y, z), width);
  return cudaSuccess;
}

}  // namespace

cudaError_t pointer_end(void* ptr, size_t pitch, size_t rows, cudaMemcpyKind kind, bool is_src, CopyEnd* out) {
  bool device;
  switch (kind) {
    case cudaMemcpyHostToHost: device = false; break;
    case cudaMemcpyHostToDevice: device = !is_src; break;
    case cudaMemcpyDeviceToHost: device = is_src; break;
    case cudaMemcpyDeviceToDevice: device = true; break;
    case cudaMemcpyDefault:
      device = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(ptr)).has_value();
      break;
    default: return cudaErrorInvalidMemcpyDirection;
  }
  if (!ptr) return cudaErrorInvalidValue;
  *out = {device ? CopyEnd::device : CopyEnd::host, ptr, pitch, rows};
  return cudaSuccess;
}

cudaError_t array_end(cudaArray_const_t array, size_t x, size_t y, size_t z, CopyEnd* out, size_t* element) {
  auto a = arrays().find(const_cast<cudaArray_t>(array));
  if (!a) return cudaErrorInvalidResourceHandle;
  *element = a->element;
  *out = {CopyEnd::array, nullptr, 0, 0, array, x * a->element, y, z};
  return cudaSuccess;
}

cudaError_t copy_3d(const CopyEnd& dst, const CopyEnd& src, size_t width, size_t height, size_t depth,
                    cudaStream_t stream, bool async) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  if (width == 0 || height == 0 || depth == 0) return cudaSuccess;
  for (const CopyEnd* e : {&dst, &src}) {
    if (e->kind == CopyEnd::array) continue;
    if (e->x > e->pitch || width > e->pitch - e->x) return cudaErrorInvalidPitchValue;
    if (depth > 1 && (e->y > e->rows || height > e->rows - e->y)) return cudaErrorInvalidValue;
  }
  bool from_host = src.kind == CopyEnd::host, to_host = dst.kind == CopyEnd::host;
  if (from_host && to_host) return host_to_host(dst, src, width, height, depth, stream, async);
  // A capture takes the copy into its graph: a copy node this process makes,
  // so that its arrays and host memory are named as a graph names them.
  cudaMemcpyKind kind = from_host ? cudaMemcpyHostToDevice : to_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  if (cudaError_t e; async && captured_copy(stream, node_side(dst), node_side(src), {width, height, depth}, kind, &e))
    return e;
  proto::CopyExtentWire extent{width, height, depth};
  uint64_t s;
  if (from_host) {
    Resolved d;
    if (cudaError_t e = resolve(dst, width, height, depth, &d)) return e;
    Call call(proto::kOpMemcpy3DHtoD);
    if (cudaError_t e = route_to_memory(call, d.device, stream, &s)) return e;
    call.args().put(d.wire).put(extent).put<uint64_t>(s).put<uint8_t>(!async);
    // Rows go out as they lie in memory: one gather list, no packing copy.
    std::vector<iovec> rows;
    if (packed(src, width, height, depth))
      rows.push_back({host_row(src, 0, 0), width * height * depth});
    else
      for (size_t z = 0; z < depth; ++z)
        for (size_t y = 0; y < height; ++y) rows.push_back({host_row(src, y, z), width});
    return async ? call.post(rows) : call.run(rows);
  }
  if (to_host) {
    Resolved r;
    if (cudaError_t e = resolve(src, width, height, depth, &r)) return e;
    Call call(proto::kOpMemcpy3DDtoH);
    if (cudaError_t e = route_to_memory(call, r.device, stream, &s)) return e;
    call.args().put(r.wire).put(extent).put<uint64_t>(s);
    // Into host memory even an asynchronous copy returns once the data is
    // there, as a local one into pageable memory does.
    if (packed(dst, width, height, depth)) return call.run_into(host_row(dst, 0, 0), width * height * depth);
    std::vector<uint8_t> rows(width * height * depth);
    if (cudaError_t e = call.run_into(rows.data(), rows.size())) return e;
    const uint8_t* p = rows.data();
    for (size_t z = 0; z < depth; ++z)
      for (size_t y = 0; y < height; ++y, p += width) std::memcpy(host_row(dst, y, z), p, width);
    return cudaSuccess;
  }
  Resolved d, r;
  if (cudaError_t e = resolve(dst, width, height, depth, &d)) return e;
  if (cudaError_t e = resolve(src, width, height, depth, &r)) return e;
  if (!same_server(d.device, r.device)) return cudaErrorInvalidValue;
  Call call(proto::kOpMemcpy3DDtoD);
  if (cudaError_t e = route_to_memory(call, d.device, stream, &s)) return e;
  call.args().put(d.wire).put(r.wire).put(extent).put<uint64_t>(s).put<uint8_t>(!async);
  return async ? call.post() : call.run();
}

cudaError_t copy_3d_parms(const cudaMemcpy3DParms* p, cudaStream_t stream, bool async) {
  if (!p) return cudaErrorInvalidValue;
  if ((p->srcArray != nullptr) == (p->srcPtr.ptr != nullptr) || (p->dstArray != nullptr) == (p->dstPtr.ptr != nullptr))
    return cudaErrorInvalidValue;
  CopyEnd src, dst;
  size_t element = 1, dst_element = 1;
  if (p->srcArray) {
    if (cudaError_t e = array_end(p->srcArray, p->srcPos.x, p->srcPos.y, p->srcPos.z, &src, &element)) return e;
  } else {
    if (cudaError_t e = pointer_end(p->srcPtr.ptr, p->srcPtr.pitch, p->srcPtr.ysize, p->kind, true, &src)) return e;
    src.x = p->srcPos.x, src.y = p->srcPos.y, src.z = p->srcPos.z;
  }
  if (p->dstArray) {
    if (cudaError_t e = array_end(p->dstArray, p->dstPos.x, p->dstPos.y, p->dstPos.z, &dst, &dst_element)) return e;
    if (!p->srcArray) element = dst_element;
  } else {
    if (cudaError_t e = pointer_end(p->dstPtr.ptr, p->dstPtr.pitch, p->dstPtr.ysize, p->kind, false, &dst)) return e;
    dst.x = p->dstPos.x, dst.y = p->dstPos.y, dst.z = p->dstPos.z;
  }
  // With an array on either side the width, and the x position on a
  // pointer side, count the array's elements (as CUDA does, checked on the
  // H100).
  if (!p->srcArray) src.x *= element;
  if (!p->dstArray) dst.x *= element;
  return copy_3d(dst, src, p->extent.width * element, p->extent.height, p->extent.depth, stream, async);
}

}  // namespace rgpu::client
