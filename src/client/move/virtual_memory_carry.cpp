#include "client/move/virtual_memory_carry.hpp"

#include <cuda.h>

#include <cstdio>
#include <string>

#include "client/core/session.hpp"
#include "client/cuda/vmm_handles.hpp"
#include "client/move/move_refusal.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

std::string range_text(uint64_t base, size_t size) {
  char text[64];
  std::snprintf(text, sizeof text, "0x%llx-0x%llx", static_cast<unsigned long long>(base),
                static_cast<unsigned long long>(base + size));
  return text;
}

std::vector<uint8_t> call(Session& to, int gpu, uint16_t op, const proto::Writer& args, const std::string& what) {
  std::vector<uint8_t> reply;
  check_step(to.call(op, static_cast<uint16_t>(gpu), args.bytes(), {}, reply), what);
  return reply;
}

}  // namespace

CarriedVirtualMemory carry_virtual_memory(Session& to, int gpu, int device) {
  const VirtualMemoryLayout layout = virtual_memory_of(device);
  CarriedVirtualMemory carried;
  for (const auto& [base, size] : layout.reservations) {
    proto::Writer w;
    w.put<uint64_t>(base).put<uint64_t>(size);
    call(to, gpu, proto::kOpVmmReserveAt, w,
         "the target cannot reserve the session's virtual memory at " + range_text(base, size));
  }
  for (const auto& a : layout.allocations) {
    if (a.size == 0) throw MoveRefusal("the session holds virtual memory imported from another process");
    CUmemAllocationProp prop = a.prop;
    prop.location.id = gpu;
    prop.win32HandleMetaData = nullptr;
    proto::Writer w;
    w.put<uint64_t>(a.size).put(prop);
    auto reply = call(to, gpu, proto::kOpVmmCreate, w, "making the session's virtual memory on the target");
    carried.allocations[a.remote] = proto::Reader(reply).get<uint64_t>();
  }
  for (const auto& m : layout.mappings) {
    auto it = carried.allocations.find(m.remote);
    if (it == carried.allocations.end()) throw MoveRefusal("the session maps virtual memory it does not hold");
    proto::Writer w;
    w.put<uint64_t>(m.base).put<uint64_t>(m.size).put<uint64_t>(0).put<uint64_t>(it->second);
    call(to, gpu, proto::kOpVmmMap, w, "mapping the session's virtual memory on the target at " + range_text(m.base, m.size));
  }
  for (const auto& [base, size] : layout.access) {
    proto::Writer w;
    w.put<uint64_t>(base).put<uint64_t>(size).put<int32_t>(gpu).put<int32_t>(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    call(to, gpu, proto::kOpVmmSetAccess, w, "opening the session's virtual memory on the target");
    carried.contents.emplace_back(base, size);
  }
  return carried;
}

}  // namespace rgpu::client
