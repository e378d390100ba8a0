// Allocation and device-level calls.
#include <cstring>
#include <vector>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// The row alignment of CUDA's devices (texturePitchAlignment).
constexpr uint64_t kCountedPitch = 512;

int32_t malloc_linear(SessionContext& s, Request& req, proto::Writer& out) {
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  DevPtr p = 0;
  if (int32_t e = s.quota.allocate(req.header().device, size, SessionQuota::Kind::memory, &p,
                                   [&] { return s.backend().malloc(&p, size); }))
    return e;
  s.allocations.add(p, size);
  out.put<uint64_t>(p);
  return cudaSuccess;
}

int32_t malloc_pitch(SessionContext& s, Request& req, proto::Writer& out) {
  auto width = req.args.get<uint64_t>();
  auto height = req.args.get<uint64_t>();
  req.args.expect_end();
  // Counted at the pitch CUDA's devices align rows to; the GPU may pad more.
  if (width > UINT64_MAX - kCountedPitch) return cudaErrorMemoryAllocation;
  const uint64_t row = (width + kCountedPitch - 1) / kCountedPitch * kCountedPitch;
  if (height && row > UINT64_MAX / height) return cudaErrorMemoryAllocation;
  DevPtr p = 0;
  size_t pitch = 0;
  if (int32_t e = s.quota.allocate(req.header().device, row * height, SessionQuota::Kind::memory, &p,
                                   [&] { return s.backend().malloc_pitch(&p, &pitch, width, height); }))
    return e;
  if (p) s.allocations.add(p, pitch * height);
  out.put<uint64_t>(p).put<uint64_t>(pitch);
  return cudaSuccess;
}

// The reservation of a kOpMallocAt list may span this many times the GPU's
// memory: a source's allocations lie close together, and address space
// nobody maps still costs the driver its page tables.
constexpr uint64_t kMaxSpanPerDeviceMemory = 4;

int32_t malloc_at(SessionContext& s, Request& req, proto::Writer&) {
  const int device = req.header().device;
  auto count = req.args.get<uint32_t>();
  if (count == 0 || count > req.args.remaining() / (2 * sizeof(uint64_t))) return cudaErrorInvalidValue;
  std::vector<FixedAddressMemory::Allocation> list(count);
  for (auto& a : list) {
    a.base = req.args.get<uint64_t>();
    a.size = req.args.get<uint64_t>();
  }
  req.args.expect_end();
  size_t free = 0, total = 0;
  if (int32_t e = s.backend().mem_get_info(&free, &total)) return e;
  // Each allocation counts against the session's count of allocations; the
  // memory, mapped by whole pages, is charged by FixedAddressMemory.
  size_t charged = 0;
  auto undo = [&] {
    for (size_t i = 0; i < charged; ++i) s.quota.freed(SessionQuota::Kind::memory, list[i].base);
  };
  for (; charged < list.size(); ++charged)
    if (int32_t e = s.quota.allocate(device, 0, SessionQuota::Kind::memory, &list[charged].base,
                                     [] { return cudaSuccess; })) {
      undo();
      return e;
    }
  std::string why;
  if (int32_t e = s.fixed_address.allocate(s.backend(), s.quota, device, list, kMaxSpanPerDeviceMemory * total, &why)) {
    undo();
    if (!why.empty()) s.warnings.warn("malloc-at", "%s", why.c_str());
    return e;
  }
  for (const auto& a : list) s.allocations.add(a.base, a.size);
  return cudaSuccess;
}

int32_t free_memory(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.take_allocation(p)) return cudaErrorInvalidValue;
  s.quota.freed(SessionQuota::Kind::memory, p);
  return s.fixed_address.holds(p) ? s.fixed_address.free(s.backend(), s.quota, p) : s.backend().free(p);
}

int32_t mem_get_info(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  size_t free = 0, total = 0;
  if (int32_t e = s.backend().mem_get_info(&free, &total)) return e;
  s.quota.view(req.header().device, &free, &total);
  out.put<uint64_t>(free).put<uint64_t>(total);
  return cudaSuccess;
}

int32_t device_synchronize(SessionContext& s, Request& req, proto::Writer&) {
  req.args.expect_end();
  return s.backend().device_synchronize();
}

int32_t device_reset(SessionContext& s, Request& req, proto::Writer&) {
  req.args.expect_end();
  // Staging buffers and their events go first, while they are still valid.
  req.lane().drop_staging(req.header().device);
  s.graph_staging.release(req.header().device);
  int32_t e = s.backend().device_reset();
  s.note_reset(req.header().device);
  s.quota.reset(req.header().device);
  if (e) return e;
  // The reset destroyed every object of the device.
  s.allocations.clear();
  s.fixed_address.forget(req.header().device);
  s.globals.clear();
  s.streams.clear();
  s.events.clear();
  s.modules.clear();
  s.pools.clear();
  s.pools_made_here.clear();
  s.functions.clear();
  s.arrays.clear();
  s.mipmaps.clear();
  s.textures.clear();
  s.surfaces.clear();
  s.texrefs.clear();
  s.module_texrefs.clear();
  s.surfrefs.clear();
  s.graphs.clear();
  s.exec_copies.clear();
  s.preloaded_modules.clear();
  s.external_memories.clear();
  s.external_semaphores.clear();
  return cudaSuccess;
}

int32_t get_device_properties(SessionContext& s, Request& req, proto::Writer& out) {
  auto ordinal = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(ordinal)) return cudaErrorInvalidDevice;
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  if (int32_t e = s.backend().get_device_properties(&prop, ordinal)) return e;
  out.put(prop);
  return cudaSuccess;
}

int32_t device_get_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  auto attr = proto::get_enum<cudaDeviceAttr>(req.args, 0, cudaDevAttrMax - 1);
  auto ordinal = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(ordinal)) return cudaErrorInvalidDevice;
  int value = 0;
  if (int32_t e = s.backend().device_attribute(&value, attr, ordinal)) return e;
  out.put<int32_t>(value);
  return cudaSuccess;
}

int32_t get_error_string(SessionContext& s, Request& req, proto::Writer& out) {
  auto error = req.args.get<int32_t>();
  req.args.expect_end();
  out.put_string(s.backend().error_string(error));
  return cudaSuccess;
}

}  // namespace

void register_memory_handlers(Dispatcher& d) {
  d.add(proto::kOpMalloc, malloc_linear);
  d.add(proto::kOpMallocPitch, malloc_pitch);
  d.add(proto::kOpMallocAt, malloc_at);
  d.add(proto::kOpFree, free_memory);
  d.add(proto::kOpMemGetInfo, mem_get_info);
}

void register_device_handlers(Dispatcher& d) {
  d.add(proto::kOpDeviceSynchronize, device_synchronize);
  d.add(proto::kOpDeviceReset, device_reset);
  d.add(proto::kOpGetDeviceProperties, get_device_properties);
  d.add(proto::kOpDeviceGetAttribute, device_get_attribute);
  d.add(proto::kOpGetErrorString, get_error_string);
}

}  // namespace rgpu::server
