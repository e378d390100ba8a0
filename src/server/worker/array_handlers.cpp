// CUDA arrays and mipmapped arrays: created through the backend, recorded in
// the session's tables, so that every later handle is checked against them.
#include <algorithm>
#include <bit>

#include "protocol/channel_format.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// What CUDA itself refuses, checked here so the backend sees sane sizes only.
int32_t check_spec(const ArraySpec& spec, size_t* element) {
  *element = proto::channel_element_size(spec.format);
  if (!*element) return cudaErrorInvalidChannelDescriptor;
  // Sparse and deferred-mapping arrays are backed through the virtual memory
  // management API (cuMemMapArrayAsync), which rgpu does not remote.
  if (spec.flags & (cudaArraySparse | cudaArrayDeferredMapping)) return cudaErrorNotSupported;
  const cudaExtent& e = spec.extent;
  if (e.width == 0) return cudaErrorInvalidValue;
  if (e.height == 0 && e.depth != 0 && !(spec.flags & cudaArrayLayered)) return cudaErrorInvalidValue;
  size_t bytes;
  if (__builtin_mul_overflow(*element, e.width, &bytes) ||
      __builtin_mul_overflow(bytes, std::max<size_t>(e.height, 1), &bytes) ||
      __builtin_mul_overflow(bytes, std::max<size_t>(e.depth, 1), &bytes))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

ArraySpec read_spec(Request& req) {
  ArraySpec spec;
  spec.format = req.args.get<cudaChannelFormatDesc>();
  spec.extent = req.args.get<cudaExtent>();
  spec.flags = req.args.get<uint32_t>();
  return spec;
}

// Layers and cube faces keep their count at every level of a mipmap.
bool depth_is_layers(const ArraySpec& spec) { return spec.flags & (cudaArrayLayered | cudaArrayCubemap); }

size_t level_size(size_t n, unsigned level) { return n ? std::max<size_t>(n >> level, 1) : 0; }

// What levels 0 to levels - 1 of an array hold, as a job's amount counts it.
uint64_t array_bytes(const ArraySpec& spec, size_t element, unsigned levels) {
  const cudaExtent& e = spec.extent;
  uint64_t total = 0;
  for (unsigned l = 0; l < levels; ++l) {
    uint64_t depth = depth_is_layers(spec) ? e.depth : level_size(e.depth, l);
    total += element * level_size(e.width, l) * std::max<uint64_t>(level_size(e.height, l), 1) *
             std::max<uint64_t>(depth, 1);
  }
  return total;
}

int32_t array_create(SessionContext& s, Request& req, proto::Writer& out) {
  ArraySpec spec = read_spec(req);
  req.args.expect_end();
  size_t element;
  if (int32_t e = check_spec(spec, &element)) return e;
  uint64_t h = 0;
  if (int32_t e = s.quota.allocate(req.header().device, array_bytes(spec, element, 1), SessionQuota::Kind::array, &h,
                                   [&] { return s.backend().arrays().array_create(spec, &h); }))
    return e;
  s.arrays.put(h, {spec, element});
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t array_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  auto r = s.arrays.find(h);
  if (!r || r->owner) return cudaErrorInvalidResourceHandle;
  s.arrays.remove(h);
  s.quota.freed(SessionQuota::Kind::array, h);
  return s.backend().arrays().array_destroy(h);
}


// CUDA clamps the level count to what the largest dimension allows.
unsigned max_levels(const ArraySpec& spec) {
  const cudaExtent& e = spec.extent;
  size_t largest = std::max({e.width, e.height, depth_is_layers(spec) ? 0 : e.depth});
  return static_cast<unsigned>(std::bit_width(largest));
}

int32_t mipmapped_array_create(SessionContext& s, Request& req, proto::Writer& out) {
  ArraySpec spec = read_spec(req);
  auto levels = req.args.get<uint32_t>();
  req.args.expect_end();
  size_t element;
  if (int32_t e = check_spec(spec, &element)) return e;
  levels = std::clamp(levels, 1u, max_levels(spec));
  uint64_t h = 0;
  if (int32_t e = s.quota.allocate(req.header().device, array_bytes(spec, element, levels), SessionQuota::Kind::mipmap,
                                   &h, [&] { return s.backend().arrays().mipmapped_array_create(spec, levels, &h); }))
    return e;
  s.mipmaps.put(h, {spec, element, 0, levels});
  out.put<uint64_t>(h).put<uint32_t>(levels);
  return cudaSuccess;
}

// A mipmapped array laid over imported external memory from `offset`.
int32_t mipmapped_array_from_external(SessionContext& s, Request& req, proto::Writer& out) {
  auto memory = req.args.get<uint64_t>();
  auto offset = req.args.get<uint64_t>();
  ArraySpec spec = read_spec(req);
  auto levels = req.args.get<uint32_t>();
  req.args.expect_end();
  auto size = s.external_memories.size_of(memory);
  if (!size) return cudaErrorInvalidResourceHandle;
  if (offset >= *size) return cudaErrorInvalidValue;
  size_t element;
  if (int32_t e = check_spec(spec, &element)) return e;
  levels = std::clamp(levels, 1u, max_levels(spec));
  uint64_t h = 0;
  if (int32_t e = s.backend().external().map_mipmapped_array(memory, offset, spec, levels, &h)) return e;
  s.mipmaps.put(h, {spec, element, 0, levels});
  out.put<uint64_t>(h).put<uint32_t>(levels);
  return cudaSuccess;
}

int32_t mipmapped_array_destroy(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.mipmaps.remove(h)) return cudaErrorInvalidResourceHandle;
  s.arrays.remove_owned_by(h);
  s.quota.freed(SessionQuota::Kind::mipmap, h);
  return s.backend().arrays().mipmapped_array_destroy(h);
}


int32_t mipmapped_array_get_level(SessionContext& s, Request& req, proto::Writer& out) {
  auto h = req.args.get<uint64_t>();
  auto level = req.args.get<uint32_t>();
  req.args.expect_end();
  auto m = s.mipmaps.find(h);
  if (!m) return cudaErrorInvalidResourceHandle;
  if (level >= m->levels) return cudaErrorInvalidValue;
  uint64_t a = 0;
  if (int32_t e = s.backend().arrays().mipmapped_array_level(h, level, &a)) return e;
  ArraySpec spec = m->spec;
  const cudaExtent& e = m->spec.extent;
  spec.extent = {level_size(e.width, level), level_size(e.height, level),
                 depth_is_layers(spec) ? e.depth : level_size(e.depth, level)};
  s.arrays.put(a, {spec, m->element, h});
  out.put<uint64_t>(a).put(spec.extent);
  return cudaSuccess;
}

}  // namespace

void register_array_handlers(Dispatcher& d) {
  d.add(proto::kOpArrayCreate, array_create);
  d.add(proto::kOpArrayDestroy, array_destroy);
  d.add(proto::kOpMipmappedArrayCreate, mipmapped_array_create);
  d.add(proto::kOpMipmappedArrayDestroy, mipmapped_array_destroy);
  d.add(proto::kOpExternalMemoryMapMipmap, mipmapped_array_from_external);
  d.add(proto::kOpMipmappedArrayGetLevel, mipmapped_array_get_level);
}

}  // namespace rgpu::server
