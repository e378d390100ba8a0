// Texture and surface objects. Their resource descriptors name arrays by the
// session's handles and memory by device address: each is checked against
// the session's tables before the backend sees it. Memory must start in the
// session's; its extent may run past that allocation, as the driver allows
// (convolutionFFT2D's textures do): a texture only reads, and only this
// worker's own context. The object's value goes
// back to the client unchanged, since kernels read it; it is known by device
// and value, as each device numbers its own.
#include <cstring>

#include "protocol/channel_format.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

int32_t check_resource(SessionContext& s, const cudaResourceDesc& r) {
  if (r.flags) return cudaErrorInvalidValue;
  switch (proto::enum_number(r.resType)) {
    case cudaResourceTypeArray:
      return s.arrays.find(address(r.res.array.array)) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case cudaResourceTypeMipmappedArray:
      return s.mipmaps.find(address(r.res.mipmap.mipmap)) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case cudaResourceTypeLinear: {
      const auto& l = r.res.linear;
      if (!proto::channel_element_size(l.desc)) return cudaErrorInvalidChannelDescriptor;
      uint64_t end;
      if (!l.sizeInBytes || __builtin_add_overflow(address(l.devPtr), l.sizeInBytes, &end))
        return cudaErrorInvalidValue;
      return s.owns(address(l.devPtr), 1) ? cudaSuccess : cudaErrorInvalidValue;
    }
    case cudaResourceTypePitch2D: {
      const auto& p = r.res.pitch2D;
      size_t element = proto::channel_element_size(p.desc), row, span;
      if (!element) return cudaErrorInvalidChannelDescriptor;
      if (p.width == 0 || p.height == 0 || __builtin_mul_overflow(p.width, element, &row) || row > p.pitchInBytes ||
          __builtin_mul_overflow(p.height - 1, p.pitchInBytes, &span) || __builtin_add_overflow(span, row, &span) ||
          __builtin_add_overflow(address(p.devPtr), span, &span))
        return cudaErrorInvalidValue;
      return s.owns(address(p.devPtr), 1) ? cudaSuccess : cudaErrorInvalidValue;
    }
  }
  return cudaErrorInvalidValue;
}

// Enumerations in range (read as numbers until they are); what their
// combinations allow is the driver's call.
int32_t check_texture(const cudaTextureDesc& t) {
  for (const auto& m : t.addressMode)
    if (auto n = proto::enum_number(m); n < cudaAddressModeWrap || n > cudaAddressModeBorder)
      return cudaErrorInvalidValue;
  for (auto f : {proto::enum_number(t.filterMode), proto::enum_number(t.mipmapFilterMode)})
    if (f != cudaFilterModePoint && f != cudaFilterModeLinear) return cudaErrorInvalidValue;
  if (auto r = proto::enum_number(t.readMode); r != cudaReadModeElementType && r != cudaReadModeNormalizedFloat)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

int32_t texture_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto resource = req.args.get<cudaResourceDesc>();
  auto texture = req.args.get<cudaTextureDesc>();
  bool has_view = req.args.get<uint8_t>();
  cudaResourceViewDesc view{};
  if (has_view) view = req.args.get<cudaResourceViewDesc>();
  req.args.expect_end();
  if (int32_t e = check_resource(s, resource)) return e;
  if (int32_t e = check_texture(texture)) return e;
  if (!s.textures.room_for_one_more()) return cudaErrorMemoryAllocation;
  uint64_t t = 0;
  if (int32_t e = s.backend().arrays().texture_create(&t, resource, texture, has_view ? &view : nullptr)) return e;
  s.textures.add(req.header().device, t);
  out.put<uint64_t>(t);
  return cudaSuccess;
}

int32_t texture_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto t = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.textures.remove(req.header().device, t)) return cudaErrorInvalidValue;
  return s.backend().arrays().texture_destroy(t);
}

// A surface reads and writes an array made for it.
int32_t surface_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto resource = req.args.get<cudaResourceDesc>();
  req.args.expect_end();
  if (proto::enum_number(resource.resType) != cudaResourceTypeArray || resource.flags) return cudaErrorInvalidValue;
  auto a = s.arrays.find(address(resource.res.array.array));
  if (!a) return cudaErrorInvalidResourceHandle;
  if (!(a->spec.flags & cudaArraySurfaceLoadStore)) return cudaErrorInvalidValue;
  if (!s.surfaces.room_for_one_more()) return cudaErrorMemoryAllocation;
  uint64_t o = 0;
  if (int32_t e = s.backend().arrays().surface_create(&o, resource)) return e;
  s.surfaces.add(req.header().device, o);
  out.put<uint64_t>(o);
  return cudaSuccess;
}

int32_t surface_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto o = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.surfaces.remove(req.header().device, o)) return cudaErrorInvalidValue;
  return s.backend().arrays().surface_destroy(o);
}

}  // namespace

void register_texture_handlers(Dispatcher& d) {
  d.add(proto::kOpTextureObjectCreate, texture_create);
  d.add(proto::kOpTextureObjectDestroy, texture_destroy);
  d.add(proto::kOpSurfaceObjectCreate, surface_create);
  d.add(proto::kOpSurfaceObjectDestroy, surface_destroy);
}

}  // namespace rgpu::server
