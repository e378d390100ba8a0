// Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap,
// cuMemSetAccess...). Every handle and range is checked against the
// session's VmmTable first; ranges made readable and writable join the
// session's mapped memory, and leave it when unmapped.
#include <unistd.h>

#include <algorithm>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// The allocation properties a client sent, with no pointer of its own in
// them; their enum fields are read as numbers until checked (wire_enum.hpp).
int32_t read_prop(SessionContext& s, Request& req, CUmemAllocationProp* prop) {
  *prop = req.args.get<CUmemAllocationProp>();
  prop->win32HandleMetaData = nullptr;
  if (proto::enum_number(prop->location.type) != CU_MEM_LOCATION_TYPE_DEVICE || !s.has_gpu(prop->location.id))
    return cudaErrorInvalidDevice;
  if (!proto::enum_is_one_of(proto::enum_number(prop->type), {CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_MANAGED}))
    return cudaErrorInvalidValue;
  constexpr auto kHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32 |
                                CU_MEM_HANDLE_TYPE_WIN32_KMT | CU_MEM_HANDLE_TYPE_FABRIC;
  if (proto::enum_number(prop->requestedHandleTypes) & ~kHandleTypes) return cudaErrorInvalidValue;
  return cudaSuccess;
}

int32_t granularity(SessionContext& s, Request& req, proto::Writer& out) {
  CUmemAllocationProp prop;
  int32_t bad = read_prop(s, req, &prop);
  auto option = req.args.get<proto::EnumNumber<CUmemAllocationGranularity_flags>>();
  req.args.expect_end();
  if (bad) return bad;
  if (!proto::enum_is_one_of(option, {CU_MEM_ALLOC_GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED}))
    return cudaErrorInvalidValue;
  size_t g = 0;
  if (int32_t e = s.backend().vmm_granularity(&g, prop, static_cast<CUmemAllocationGranularity_flags>(option)))
    return e;
  out.put<uint64_t>(g);
  return cudaSuccess;
}

int32_t create(SessionContext& s, Request& req, proto::Writer& out) {
  auto size = req.args.get<uint64_t>();
  CUmemAllocationProp prop;
  int32_t bad = read_prop(s, req, &prop);
  req.args.expect_end();
  if (bad) return bad;
  Handle h = 0;
  if (int32_t e = s.quota.allocate(prop.location.id, size, SessionQuota::Kind::vmm, &h,
                                   [&] { return s.backend().vmm_create(&h, size, prop); }))
    return e;
  s.vmm.add_allocation(h, size);
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t release(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.vmm.remove_allocation(h)) return cudaErrorInvalidValue;
  s.multicast.remove(h);
  s.descriptor_exports.drop(proto::DescriptorKind::memory, h);
  s.quota.freed(SessionQuota::Kind::vmm, h);
  return s.backend().vmm_release(h);
}

int32_t multicast_create(SessionContext& s, Request& req, proto::Writer& out) {
  auto prop = req.args.get<CUmulticastObjectProp>();
  req.args.expect_end();
  Handle h = 0;
  if (int32_t e = s.backend().multicast_create(&h, prop)) return e;
  s.vmm.add_allocation(h, prop.size);
  s.multicast.add(h);
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t reserve(SessionContext& s, Request& req, proto::Writer& out) {
  auto size = req.args.get<uint64_t>();
  auto alignment = req.args.get<uint64_t>();
  req.args.expect_end();
  DevPtr p = 0;
  if (int32_t e = s.backend().vmm_reserve(&p, size, alignment, 0)) return e;
  s.vmm.add_reservation(p, size);
  out.put<uint64_t>(p);
  return cudaSuccess;
}

// A reservation at the address named, for a session moved here (it keeps
// its virtual memory's addresses, docs/migration.md): base, size. Where the
// session's fixed-address memory reserved a span around it (the reservation
// lay between its allocations), a hole of that span is lent to it; else it
// is reserved there. Anywhere else is cudaErrorAlreadyMapped.
int32_t reserve_at(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  if (size == 0 || base + size < base || s.vmm.reserved_over(base, size)) return cudaErrorInvalidValue;
  if (!s.fixed_address.lend(base, size, req.header().device)) {
    DevPtr p = 0;
    if (int32_t e = s.backend().vmm_reserve(&p, size, 0, base)) return e;
    if (p != base) {
      s.backend().vmm_free(p, size);
      return cudaErrorAlreadyMapped;
    }
  }
  s.vmm.add_reservation(base, size);
  return cudaSuccess;
}

int32_t free_reservation(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.vmm.remove_reservation(p, size)) return cudaErrorInvalidValue;
  if (s.fixed_address.lent(p)) return s.fixed_address.take_back(s.backend(), p);
  return s.backend().vmm_free(p, size);
}

int32_t map(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  auto offset = req.args.get<uint64_t>();
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  auto allocation = s.vmm.allocation_size(h);
  if (!allocation) return cudaErrorInvalidValue;
  // An imported allocation of unknown size (0) is bounded by the driver's own checks.
  bool inside = *allocation == 0 || (offset <= *allocation && size <= *allocation - offset);
  if (!inside || !s.vmm.can_map(p, size)) return cudaErrorInvalidValue;
  if (int32_t e = s.backend().vmm_map(p, size, offset, h)) return e;
  s.vmm.add_mapping({p, size, h});
  return cudaSuccess;
}

int32_t unmap(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  auto mappings = s.vmm.mappings_in(p, size);
  if (!mappings) return cudaErrorInvalidValue;
  // What stays mapped of an accessible range stays accessible.
  for (auto [base, length] : s.vmm.take_access(p, size, false)) {
    s.mapped.remove(base);
    for (auto [begin, end] : {std::pair{base, p}, std::pair{p + size, base + length}})
      if (begin < end) {
        s.mapped.add(begin, end - begin);
        s.vmm.add_access(begin, end - begin);
      }
  }
  for (const auto& m : *mappings) s.vmm.remove_mapping(m.base);
  return s.backend().vmm_unmap(p, size);
}

int32_t set_access(SessionContext& s, Request& req, proto::Writer&) {
  auto p = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  auto device = req.args.get<int32_t>();
  auto number = req.args.get<proto::EnumNumber<CUmemAccess_flags>>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  if (!proto::enum_is_one_of(number, {CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ,
                                      CU_MEM_ACCESS_FLAGS_PROT_READWRITE}))
    return cudaErrorInvalidValue;
  auto flags = static_cast<CUmemAccess_flags>(number);
  auto mappings = s.vmm.mappings_in(p, size);
  if (!mappings) return cudaErrorInvalidValue;
  if (int32_t e = s.backend().vmm_set_access(p, size, device, flags)) return e;
  // Memory some GPU may write takes part in copies and memsets until unmapped.
  // Ranges made accessible before that overlap or touch this one merge with
  // it: a copy may run across chunks mapped back to back (XLA's allocator).
  if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
    uint64_t begin = p, end = p + size;
    for (auto [base, length] : s.vmm.take_access(p, size, true)) {
      s.mapped.remove(base);
      begin = std::min(begin, base);
      end = std::max<uint64_t>(end, base + length);
    }
    s.mapped.add(begin, end - begin);
    s.vmm.add_access(begin, end - begin);
  }
  return cudaSuccess;
}

int32_t get_access(SessionContext& s, Request& req, proto::Writer& out) {
  auto device = req.args.get<int32_t>();
  auto p = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.has_gpu(device)) return cudaErrorInvalidDevice;
  unsigned long long flags = 0;
  if (int32_t e = s.backend().vmm_get_access(&flags, device, p)) return e;
  out.put<uint64_t>(flags);
  return cudaSuccess;
}

}  // namespace

void register_vmm_handlers(Dispatcher& d) {
  d.add(proto::kOpVmmGranularity, granularity);
  d.add(proto::kOpVmmCreate, create);
  d.add(proto::kOpVmmRelease, release);
  d.add(proto::kOpMulticastCreate, multicast_create);
  d.add(proto::kOpVmmReserve, reserve);
  d.add(proto::kOpVmmFree, free_reservation);
  d.add(proto::kOpVmmReserveAt, reserve_at);
  d.add(proto::kOpVmmMap, map);
  d.add(proto::kOpVmmUnmap, unmap);
  d.add(proto::kOpVmmSetAccess, set_access);
  d.add(proto::kOpVmmGetAccess, get_access);
}

}  // namespace rgpu::server
