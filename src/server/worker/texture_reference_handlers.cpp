// Legacy texture and surface references. A reference is used only if this
// session created it or found it in one of its modules; what it is bound to
// (memory, arrays) is checked against the session's tables first.
#include "protocol/ops.hpp"
#include "protocol/texture_reference_wire.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

using proto::RefAttr;

bool is_texref(SessionContext& s, uint64_t ref) { return s.texrefs.contains(ref) || s.module_texrefs.contains(ref); }

// Bytes per channel of a CUarray_format (its numeric value, cuda.h); 0 for
// formats rgpu does not handle.
size_t channel_bytes(int32_t format) {
  switch (format) {
    case 0x01: case 0x08: return 1;             // (un)signed 8-bit
    case 0x02: case 0x09: case 0x10: return 2;  // (un)signed 16-bit, half
    case 0x03: case 0x0a: case 0x20: return 4;  // (un)signed 32-bit, float
    default: return 0;
  }
}

int32_t check_pitched(SessionContext& s, const proto::RefValue& v) {
  size_t element = channel_bytes(v.a) * (v.b == 1 || v.b == 2 || v.b == 4 ? v.b : 0), row, span;
  if (!element || v.width == 0 || v.height == 0 || __builtin_mul_overflow(v.width, element, &row) || row > v.bytes ||
      __builtin_mul_overflow(v.height - 1, v.bytes, &span) || __builtin_add_overflow(span, row, &span))
    return cudaErrorInvalidValue;
  return s.owns(v.handle, span) ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t check_set(SessionContext& s, uint64_t ref, RefAttr attr, const proto::RefValue& v) {
  if (attr == RefAttr::surface_array) {
    if (!s.surfrefs.contains(ref)) return cudaErrorInvalidResourceHandle;
    auto a = s.arrays.find(v.handle);
    if (!a) return cudaErrorInvalidResourceHandle;
    return a->spec.flags & cudaArraySurfaceLoadStore ? cudaSuccess : cudaErrorInvalidValue;
  }
  if (!is_texref(s, ref)) return cudaErrorInvalidResourceHandle;
  switch (attr) {
    case RefAttr::address: return v.bytes && s.owns(v.handle, v.bytes) ? cudaSuccess : cudaErrorInvalidValue;
    case RefAttr::address_2d: return check_pitched(s, v);
    case RefAttr::address_mode: return v.a >= 0 && v.a < 3 ? cudaSuccess : cudaErrorInvalidValue;
    case RefAttr::array: return s.arrays.find(v.handle) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case RefAttr::mipmapped_array: return s.mipmaps.find(v.handle) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case RefAttr::border_color:
    case RefAttr::filter_mode:
    case RefAttr::flags:
    case RefAttr::format:
    case RefAttr::max_anisotropy:
    case RefAttr::mipmap_filter_mode:
    case RefAttr::mipmap_level_bias:
    case RefAttr::mipmap_level_clamp: return cudaSuccess;  // plain values: the driver judges them
    case RefAttr::function_parameter:
      // CU_PARAM_TR_DEFAULT (-1) is the only texture unit CUDA takes.
      return !s.functions.find(v.handle) ? cudaErrorInvalidResourceHandle
             : v.a == -1                 ? cudaSuccess
                                         : cudaErrorInvalidValue;
    case RefAttr::surface_array: break;
  }
  return cudaErrorInvalidValue;
}

int32_t texref_create(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  if (!s.texrefs.room_for_one_more()) return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t ref = 0;
  if (int32_t e = s.backend().arrays().texref_create(&ref)) return e;
  s.texrefs.add(ref);
  out.put<uint64_t>(ref);
  return cudaSuccess;
}

int32_t texref_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto ref = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.texrefs.remove(ref)) return cudaErrorInvalidResourceHandle;
  return s.backend().arrays().texref_destroy(ref);
}

int32_t module_get_reference(SessionContext& s, Request& req, proto::Writer& out) {
  auto module = req.args.get<uint64_t>();
  auto name = req.args.get_string();
  bool surface = req.args.get<uint8_t>();
  req.args.expect_end();
  if (!s.modules.contains(module)) return cudaErrorInvalidResourceHandle;
  uint64_t ref = 0;
  if (int32_t e = s.backend().arrays().module_get_reference(module, name, surface, &ref)) return e;
  (surface ? s.surfrefs : s.module_texrefs).add(ref);
  out.put<uint64_t>(ref);
  return cudaSuccess;
}

RefAttr read_attr(Request& req) {
  auto attr = req.args.get<uint32_t>();
  if (attr > static_cast<uint32_t>(RefAttr::function_parameter)) throw proto::DecodeError("unknown reference property");
  return static_cast<RefAttr>(attr);
}

int32_t reference_set(SessionContext& s, Request& req, proto::Writer& out) {
  auto ref = req.args.get<uint64_t>();
  RefAttr attr = read_attr(req);
  auto value = req.args.get<proto::RefValue>();
  req.args.expect_end();
  if (int32_t e = check_set(s, ref, attr, value)) return e;
  proto::RefValue answer;
  if (int32_t e = s.backend().arrays().reference_set(ref, attr, value, &answer)) return e;
  out.put(answer);
  return cudaSuccess;
}

int32_t reference_get(SessionContext& s, Request& req, proto::Writer& out) {
  auto ref = req.args.get<uint64_t>();
  RefAttr attr = read_attr(req);
  auto value = req.args.get<proto::RefValue>();
  req.args.expect_end();
  bool surface = attr == RefAttr::surface_array;
  if (!(surface ? s.surfrefs.contains(ref) : is_texref(s, ref))) return cudaErrorInvalidResourceHandle;
  if (attr == RefAttr::address_2d || attr == RefAttr::function_parameter ||
      (attr == RefAttr::address_mode && (value.a < 0 || value.a >= 3)))
    return cudaErrorInvalidValue;
  if (int32_t e = s.backend().arrays().reference_get(ref, attr, &value)) return e;
  out.put(value);
  return cudaSuccess;
}

}  // namespace

void register_texture_reference_handlers(Dispatcher& d) {
  d.add(proto::kOpTexRefCreate, texref_create);
  d.add(proto::kOpTexRefDestroy, texref_destroy);
  d.add(proto::kOpModuleGetReference, module_get_reference);
  d.add(proto::kOpReferenceSet, reference_set);
  d.add(proto::kOpReferenceGet, reference_get);
}

}  // namespace rgpu::server
