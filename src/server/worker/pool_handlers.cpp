// Stream-ordered allocation and memory pools. Pools are session objects
// like streams (a pool handle from the wire is used only if this session
// created or was handed it); pool allocations join the session's memory.
#include <cstring>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

#define RGPU_POOL(name)                                  \
  auto name = req.args.get<uint64_t>();                 \
  if (!s.pools.contains(name)) return cudaErrorInvalidResourceHandle

int32_t malloc_async(SessionContext& s, Request& req, proto::Writer& out) {
  auto size = req.args.get<uint64_t>();
  auto pool = req.args.get<uint64_t>();  // 0: the device's current pool
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (pool && !s.pools.contains(pool)) return cudaErrorInvalidResourceHandle;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  DevPtr p = 0;
  if (int32_t e = s.quota.allocate(req.header().device, size, SessionQuota::Kind::memory, &p,
                                   [&] { return s.backend().malloc_async(&p, size, pool, stream); }))
    return e;
  if (p) s.allocations.add(p, size);
  out.put<uint64_t>(p);
  return cudaSuccess;
}

int32_t free_async(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  auto stream = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  if (!s.take_allocation(p)) return cudaErrorInvalidValue;
  s.quota.freed(SessionQuota::Kind::memory, p);
  // Memory a move made at its address (docs/migration.md) is no pool's: it
  // goes once the stream's work before the free is done.
  if (s.fixed_address.holds(p)) {
    if (int32_t e = s.backend().stream_synchronize(stream)) return e;
    return s.fixed_address.free(s.backend(), s.quota, p);
  }
  return s.backend().free_async(p, stream);
}

int32_t mem_pool_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto props = req.args.get<cudaMemPoolProps>();
  req.args.expect_end();
  // Its enum fields are read as numbers until checked (wire_enum.hpp).
  if (!proto::enum_is_one_of(proto::enum_number(props.allocType),
                             {cudaMemAllocationTypePinned, cudaMemAllocationTypeManaged}))
    return cudaErrorInvalidValue;
  if (proto::enum_number(props.location.type) != cudaMemLocationTypeDevice || !s.has_gpu(props.location.id))
    return cudaErrorInvalidValue;
  // Pools shared between processes: through POSIX descriptors (shm) or
  // fabric handles (shareable_handle_handlers.cpp); Windows handles mean
  // nothing on this server.
  if (proto::enum_number(props.handleTypes) & ~(cudaMemHandleTypePosixFileDescriptor | cudaMemHandleTypeFabric))
    return cudaErrorNotSupported;
  props.win32SecurityAttributes = nullptr;  // a client address means nothing here
  if (!s.pools.room_for_one_more()) return cudaErrorMemoryAllocation;
  Handle pool = 0;
  if (int32_t e = s.backend().mem_pool_create(&pool, props)) return e;
  s.pools.add(pool);
  s.pools_made_here.add(pool);
  out.put<uint64_t>(pool);
  return cudaSuccess;
}

int32_t mem_pool_destroy(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_POOL(pool);
  req.args.expect_end();
  int32_t e = s.backend().mem_pool_destroy(pool);
  if (e != cudaSuccess) return e;
  s.pools.remove(pool);
  s.pools_made_here.remove(pool);
  s.descriptor_exports.drop(proto::DescriptorKind::pool, pool);
  return e;
}

bool known_attribute(int32_t attr) {
  return attr >= cudaMemPoolReuseFollowEventDependencies && attr <= cudaMemPoolAttrUsedMemHigh;
}

int32_t mem_pool_set_attribute(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_POOL(pool);
  auto attr = req.args.get<int32_t>();
  auto value = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!known_attribute(attr)) return cudaErrorInvalidValue;
  return s.backend().mem_pool_set_attribute(pool, static_cast<cudaMemPoolAttr>(attr), value);
}

int32_t mem_pool_get_attribute(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_POOL(pool);
  auto attr = req.args.get<int32_t>();
  req.args.expect_end();
  if (!known_attribute(attr)) return cudaErrorInvalidValue;
  uint64_t value = 0;
  if (int32_t e = s.backend().mem_pool_get_attribute(pool, static_cast<cudaMemPoolAttr>(attr), &value)) return e;
  out.put(value);
  return cudaSuccess;
}

int32_t mem_pool_trim_to(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_POOL(pool);
  auto keep = req.args.get<uint64_t>();
  req.args.expect_end();
  return s.backend().mem_pool_trim_to(pool, keep);
}

// The device's default or current pool, which the session may use from now.
template <int32_t (Backend::*Get)(Handle*, int)>
int32_t device_pool(SessionContext& s, Request& req, proto::Writer& out) {
  auto ordinal = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(ordinal)) return cudaErrorInvalidDevice;
  Handle pool = 0;
  if (int32_t e = (s.backend().*Get)(&pool, ordinal)) return e;
  s.pools.add(pool);
  out.put<uint64_t>(pool);
  return cudaSuccess;
}

int32_t device_set_mem_pool(SessionContext& s, Request& req, proto::Writer&) {
  auto ordinal = req.args.get<int32_t>();
  RGPU_POOL(pool);
  req.args.expect_end();
  if (!s.has_gpu(ordinal)) return cudaErrorInvalidDevice;
  return s.backend().device_set_mem_pool(ordinal, pool);
}

int32_t mem_pool_set_access(SessionContext& s, Request& req, proto::Writer&) {
  RGPU_POOL(pool);
  auto device = req.args.get<int32_t>();
  auto flags = req.args.get<proto::EnumNumber<cudaMemAccessFlags>>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  if (!proto::enum_is_one_of(flags, {cudaMemAccessFlagsProtNone, cudaMemAccessFlagsProtRead,
                                     cudaMemAccessFlagsProtReadWrite}))
    return cudaErrorInvalidValue;
  return s.backend().mem_pool_set_access(pool, device, static_cast<cudaMemAccessFlags>(flags));
}

int32_t mem_pool_get_access(SessionContext& s, Request& req, proto::Writer& out) {
  RGPU_POOL(pool);
  auto device = req.args.get<int32_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  if (int32_t e = s.backend().mem_pool_get_access(&flags, pool, device)) return e;
  out.put<int32_t>(flags);
  return cudaSuccess;
}

#undef RGPU_POOL

}  // namespace

void register_pool_handlers(Dispatcher& d) {
  d.add(proto::kOpMallocAsync, malloc_async);
  d.add(proto::kOpFreeAsync, free_async);
  d.add(proto::kOpMemPoolCreate, mem_pool_create);
  d.add(proto::kOpMemPoolDestroy, mem_pool_destroy);
  d.add(proto::kOpMemPoolSetAttribute, mem_pool_set_attribute);
  d.add(proto::kOpMemPoolGetAttribute, mem_pool_get_attribute);
  d.add(proto::kOpMemPoolTrimTo, mem_pool_trim_to);
  d.add(proto::kOpDeviceGetDefaultMemPool, device_pool<&Backend::device_get_default_mem_pool>);
  d.add(proto::kOpDeviceGetMemPool, device_pool<&Backend::device_get_mem_pool>);
  d.add(proto::kOpDeviceSetMemPool, device_set_mem_pool);
  d.add(proto::kOpMemPoolSetAccess, mem_pool_set_access);
  d.add(proto::kOpMemPoolGetAccess, mem_pool_get_access);
}

}  // namespace rgpu::server
