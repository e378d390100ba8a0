// Virtual memory management: physical allocations, address reservations,
// mappings and access live on the server of the device they name (a
// reservation on the current device's). Handles the application sees are
// the client's own numbers; a reservation only maps allocations of its own
// server. Ranges made readable and writable enter the memory map, so
// copies and memsets on them go to that server. Allocations cross to other
// processes through shareable handles (client/core/shareable_handle.hpp).
// Multicast objects are handles of the same kind (cuMemRelease frees them,
// cuMemMap maps them).
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>

#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/shareable_handle.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/vmm_handles.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

struct Allocation {
  int device;
  uint64_t remote;
  CUmemAllocationProp prop;  // as the application gave it
  size_t size = 0;           // 0: imported, only the driver knows
  int references = 1;
  bool multicast = false;    // a multicast object (cuMulticastCreate)
};

struct Reservation {
  size_t size;
  int device;  // whose server holds the address range
};

struct Mapping {
  size_t size;
  CUmemGenericAllocationHandle handle;
  int device;
};

struct State {
  std::mutex mutex;
  uint64_t next_handle = 1;
  std::map<CUmemGenericAllocationHandle, Allocation> allocations;
  std::map<uint64_t, Reservation> reservations;
  std::map<uint64_t, Mapping> mappings;
  std::map<uint64_t, size_t> access;  // read-write ranges, in the memory map whole
};

State& state() {
  static auto* s = new State;
  return *s;
}

template <typename T>
typename std::map<uint64_t, T>::iterator holding(std::map<uint64_t, T>& m, uint64_t p, size_t size) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  uint64_t offset = p - it->first;
  return offset < it->second.size && size <= it->second.size - offset ? it : m.end();
}

// Routes to the device a property names; the server sees its own ordinal.
CUresult route_prop(Call& call, const CUmemAllocationProp* prop, CUmemAllocationProp* remote) {
  if (!prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  int32_t ordinal;
  if (cudaError_t e = call.to_device(prop->location.id, &ordinal)) return to_cu(e);
  *remote = *prop;
  remote->location.id = ordinal;
  remote->win32HandleMetaData = nullptr;
  return CUDA_SUCCESS;
}

CUresult run(Call& call) { return to_cu(call.run()); }

// The application's device that is GPU `ordinal` of the call's server (the
// call's own device when none is listed).
int device_of(const Call& call, int ordinal) {
  Runtime& rt = Runtime::get();
  for (int i = 0; i < rt.device_count(); ++i)
    if (rt.device(i)->session == call.device()->session && rt.device(i)->remote == ordinal) return i;
  return call.device_index();
}

CUmemGenericAllocationHandle remember(int device, uint64_t remote, const CUmemAllocationProp& prop, size_t size) {
  std::lock_guard lock(state().mutex);
  CUmemGenericAllocationHandle handle = state().next_handle++;
  state().allocations[handle] = {device, remote, prop, size};
  return handle;
}

}  // namespace

namespace rgpu::client {

VirtualMemoryLayout virtual_memory_of(int device) {
  std::lock_guard lock(state().mutex);
  VirtualMemoryLayout out;
  for (const auto& [base, r] : state().reservations)
    if (r.device == device) out.reservations.emplace_back(base, r.size);
  for (const auto& [handle, a] : state().allocations)
    if (a.device == device && !a.multicast) out.allocations.push_back({a.remote, a.size, a.prop});
  for (const auto& [base, m] : state().mappings)
    if (m.device == device)
      if (auto a = state().allocations.find(m.handle); a != state().allocations.end())
        out.mappings.push_back({base, m.size, a->second.remote});
  for (const auto& [base, size] : state().access)
    if (auto range = MemoryMap::get().find_device(base); range && range->device == device)
      out.access.emplace_back(base, size);
  return out;
}

void virtual_memory_moved(int device, const std::map<uint64_t, uint64_t>& remote_now) {
  std::lock_guard lock(state().mutex);
  for (auto& [handle, a] : state().allocations)
    if (a.device == device)
      if (auto it = remote_now.find(a.remote); it != remote_now.end()) a.remote = it->second;
}

bool vmm_handle_remote(CUmemGenericAllocationHandle handle, bool multicast, int* device, uint64_t* remote) {
  std::lock_guard lock(state().mutex);
  auto it = state().allocations.find(handle);
  if (it == state().allocations.end() || it->second.multicast != multicast) return false;
  *device = it->second.device;
  *remote = it->second.remote;
  return true;
}

}  // namespace rgpu::client

extern "C" CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                          CUmemAllocationGranularity_flags option) {
  if (CUresult e = driver_ready()) return e;
  if (!granularity) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Call call(proto::kOpVmmGranularity);
  CUmemAllocationProp remote;
  if (CUresult e = route_prop(call, prop, &remote)) return e;
  call.args().put(remote).put<int32_t>(option);
  if (CUresult e = to_cu(call.quiet().run())) return e;
  *granularity = call.reply().get<uint64_t>();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                        const CUmemAllocationProp* prop, unsigned long long flags) {
  if (CUresult e = driver_ready()) return e;
  if (!handle || flags) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Call call(proto::kOpVmmCreate);
  CUmemAllocationProp remote;
  if (CUresult e = route_prop(call, prop, &remote)) return e;
  call.args().put<uint64_t>(size).put(remote);
  if (CUresult e = run(call)) return e;
  *handle = remember(call.device_index(), call.reply().get<uint64_t>(), *prop, size);
  return CUDA_SUCCESS;
}

// The allocation must have asked for the handle type at cuMemCreate (the
// server's driver checks). A descriptor arrives as the application's own.
extern "C" CUresult CUDAAPI cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                         CUmemAllocationHandleType handleType,
                                                         unsigned long long flags) {
  if (CUresult e = driver_ready()) return e;
  if (!shareableHandle || flags) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Allocation a;
  {
    std::lock_guard lock(state().mutex);
    auto it = state().allocations.find(handle);
    if (it == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    a = it->second;
  }
  Call call(proto::kOpVmmExport);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(a.device, &ordinal)) return to_cu(e);
  if (cudaError_t e = check_shareable_type(handleType)) return to_cu(e);
  call.args().put<uint64_t>(a.remote).put<int32_t>(handleType);
  return to_cu(run_export(call, handleType, shareableHandle));
}

// Imported on the current device's server, as an allocation of whichever
// of its GPUs holds the memory.
extern "C" CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                           CUmemAllocationHandleType shHandleType) {
  if (CUresult e = driver_ready()) return e;
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Call call(proto::kOpVmmImport);
  if (cudaError_t e = call.to_current_device()) return to_cu(e);
  if (cudaError_t e = check_shareable_type(shHandleType)) return to_cu(e);
  if (cudaError_t e = run_import(call, shHandleType, osHandle, "cuMemImportFromShareableHandle")) return to_cu(e);
  auto remote = call.reply().get<uint64_t>();
  auto prop = call.reply().get<CUmemAllocationProp>();
  prop.location.id = device_of(call, prop.location.id);
  *handle = remember(prop.location.id, remote, prop, 0);
  return CUDA_SUCCESS;
}

// A multicast object on the current device's server; its other calls are
// generated (cuda.toml) and find it through vmm_handle_remote.
extern "C" CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle* mcHandle,
                                              const CUmulticastObjectProp* prop) {
  if (CUresult e = driver_ready()) return e;
  if (!mcHandle || !prop) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Call call(proto::kOpMulticastCreate);
  if (cudaError_t e = call.to_current_device()) return to_cu(e);
  call.args().put(*prop);
  if (CUresult e = run(call)) return e;
  std::lock_guard lock(state().mutex);
  *mcHandle = state().next_handle++;
  Allocation a{call.device_index(), call.reply().get<uint64_t>(), {}};
  a.multicast = true;
  state().allocations[*mcHandle] = a;
  return CUDA_SUCCESS;
}

// Each cuMemRetainAllocationHandle needs a release of its own; the memory
// goes with the last one (and stays while mapped, as in CUDA).
extern "C" CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  if (CUresult e = driver_ready()) return e;
  KeepLastError keep;
  Allocation a;
  {
    std::lock_guard lock(state().mutex);
    auto it = state().allocations.find(handle);
    if (it == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    if (--it->second.references > 0) return CUDA_SUCCESS;
    a = it->second;
    state().allocations.erase(it);
  }
  Call call(proto::kOpVmmRelease);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(a.device, &ordinal)) return to_cu(e);
  call.args().put<uint64_t>(a.remote);
  return run(call);
}

// The address hint is not followed: the server's driver picks the range.
extern "C" CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                                unsigned long long flags) {
  if (CUresult e = driver_ready()) return e;
  if (!ptr || flags) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Call call(proto::kOpVmmReserve);
  if (cudaError_t e = call.to_current_device()) return to_cu(e);
  call.args().put<uint64_t>(size).put<uint64_t>(alignment);
  if (CUresult e = run(call)) return e;
  *ptr = call.reply().get<uint64_t>();
  std::lock_guard lock(state().mutex);
  state().reservations[*ptr] = {size, call.device_index()};
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  if (CUresult e = driver_ready()) return e;
  KeepLastError keep;
  int device;
  {
    std::lock_guard lock(state().mutex);
    auto it = state().reservations.find(ptr);
    if (it == state().reservations.end() || it->second.size != size) return CUDA_ERROR_INVALID_VALUE;
    device = it->second.device;
  }
  Call call(proto::kOpVmmFree);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return to_cu(e);
  call.args().put<uint64_t>(ptr).put<uint64_t>(size);
  if (CUresult e = run(call)) return e;
  std::lock_guard lock(state().mutex);
  state().reservations.erase(ptr);
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                     unsigned long long flags) {
  if (CUresult e = driver_ready()) return e;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  Allocation a;
  {
    std::lock_guard lock(state().mutex);
    auto alloc = state().allocations.find(handle);
    if (alloc == state().allocations.end()) return CUDA_ERROR_INVALID_HANDLE;
    auto r = holding(state().reservations, ptr, size);
    if (r == state().reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    // A GPU of one server cannot back addresses of another's.
    if (!same_server(r->second.device, alloc->second.device)) return CUDA_ERROR_INVALID_DEVICE;
    a = alloc->second;
  }
  Call call(proto::kOpVmmMap);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(a.device, &ordinal)) return to_cu(e);
  call.args().put<uint64_t>(ptr).put<uint64_t>(size).put<uint64_t>(offset).put<uint64_t>(a.remote);
  if (CUresult e = run(call)) return e;
  std::lock_guard lock(state().mutex);
  state().mappings[ptr] = {size, handle, a.device};
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  if (CUresult e = driver_ready()) return e;
  KeepLastError keep;
  int device;
  {
    std::lock_guard lock(state().mutex);
    auto r = holding(state().reservations, ptr, size);
    if (r == state().reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    device = r->second.device;
  }
  Call call(proto::kOpVmmUnmap);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return to_cu(e);
  call.args().put<uint64_t>(ptr).put<uint64_t>(size);
  if (CUresult e = run(call)) return e;
  std::lock_guard lock(state().mutex);
  auto& m = state().mappings;
  m.erase(m.lower_bound(ptr), m.lower_bound(ptr + size));
  // As on the server: what stays mapped of an accessible range stays so.
  auto& a = state().access;
  std::vector<std::pair<uint64_t, uint64_t>> kept;
  for (auto it = a.begin(); it != a.end();) {
    if (it->first < ptr + size && ptr < it->first + it->second) {
      if (it->first < ptr) kept.emplace_back(it->first, ptr);
      if (ptr + size < it->first + it->second) kept.emplace_back(ptr + size, it->first + it->second);
      MemoryMap::get().remove_device(it->first);
      it = a.erase(it);
    } else {
      ++it;
    }
  }
  for (auto [begin, end] : kept)
    if (MemoryMap::get().add_device(begin, end - begin, device)) a[begin] = end - begin;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  if (CUresult e = driver_ready()) return e;
  if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  int device;
  {
    std::lock_guard lock(state().mutex);
    auto r = holding(state().reservations, ptr, size);
    if (r == state().reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    device = r->second.device;
  }
  bool writable = false;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    VirtualDevice* d = Runtime::get().device(desc[i].location.id);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    if (!same_server(desc[i].location.id, device)) return CUDA_ERROR_INVALID_DEVICE;
    Call call(proto::kOpVmmSetAccess);
    int32_t ordinal;
    if (cudaError_t e = call.to_device(device, &ordinal)) return to_cu(e);
    call.args().put<uint64_t>(ptr).put<uint64_t>(size).put<int32_t>(d->remote).put<int32_t>(desc[i].flags);
    if (CUresult e = run(call)) return e;
    writable |= desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  if (!writable) return CUDA_SUCCESS;
  std::lock_guard lock(state().mutex);
  auto first = state().mappings.find(ptr);
  if (first == state().mappings.end()) return CUDA_SUCCESS;
  // Merged with the accessible ranges of its device it overlaps or touches,
  // as on the server: a copy or memset may run across chunks mapped back to
  // back (XLA's allocator maps its memory so).
  uint64_t begin = ptr, end = ptr + size;
  auto& a = state().access;
  auto same_device = [&](uint64_t base) {
    auto range = MemoryMap::get().find_device(base);
    return range && range->device == first->second.device;
  };
  for (auto it = a.begin(); it != a.end();) {
    if (it->first <= ptr + size && ptr <= it->first + it->second && same_device(it->first)) {
      begin = std::min<uint64_t>(begin, it->first);
      end = std::max<uint64_t>(end, it->first + it->second);
      MemoryMap::get().remove_device(it->first);
      it = a.erase(it);
    } else {
      ++it;
    }
  }
  if (!MemoryMap::get().add_device(begin, end - begin, first->second.device)) return CUDA_ERROR_OUT_OF_MEMORY;
  a[begin] = end - begin;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  if (CUresult e = driver_ready()) return e;
  if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  int device;
  {
    std::lock_guard lock(state().mutex);
    auto r = holding(state().reservations, ptr, 1);
    if (r == state().reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    device = r->second.device;
  }
  VirtualDevice* d = Runtime::get().device(location->id);
  if (!d) return CUDA_ERROR_INVALID_DEVICE;
  if (!same_server(location->id, device)) {
    *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
  }
  Call call(proto::kOpVmmGetAccess);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(device, &ordinal)) return to_cu(e);
  call.args().put<int32_t>(d->remote).put<uint64_t>(ptr);
  if (CUresult e = to_cu(call.quiet().run())) return e;
  *flags = call.reply().get<uint64_t>();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                                   CUmemGenericAllocationHandle handle) {
  if (CUresult e = driver_ready()) return e;
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(state().mutex);
  auto it = state().allocations.find(handle);
  // A multicast object has no allocation properties.
  if (it == state().allocations.end() || it->second.multicast) return CUDA_ERROR_INVALID_VALUE;
  *prop = it->second.prop;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  if (CUresult e = driver_ready()) return e;
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(state().mutex);
  auto m = holding(state().mappings, reinterpret_cast<uint64_t>(addr), 1);
  if (m == state().mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  auto a = state().allocations.find(m->second.handle);
  // Released already: the mapping alone keeps the memory.
  if (a == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  ++a->second.references;
  *handle = m->second.handle;
  return CUDA_SUCCESS;
}
