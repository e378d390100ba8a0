#include "client/cudart/mapped_memory.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/host_memory_model.hpp"
#include "client/core/kernel_launch.hpp"
#include "client/core/memory_map.hpp"
#include "client/cudart/coherent_memory.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace rgpu::client {

bool coherent_page_locked(unsigned flags) {
  static const bool all = [] {
    const char* v = std::getenv("RGPU_PAGE_LOCKED_MAPPED");
    return v && *v && *v != '0';
  }();
  return all || (flags & cudaHostAllocMapped);
}

cudaError_t alloc_coherent(void** ptr, size_t size, unsigned flags) {
  uint64_t base = 0;
  if (cudaError_t e = coherent_memory::allocate(size, flags & cudaHostAllocPortable, &base)) return e;
  MemoryMap::get().add_host({base, size, flags, false, -1, true});
  *ptr = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

namespace {

// The calling thread's context on `device` while it lives.
class OnDevice {
 public:
  explicit OnDevice(int device) : device_(Runtime::current_device()), slot_(Runtime::current_green_slot()) {
    if (device != device_) Runtime::set_current_device(device);
    switched_ = device != device_;
  }
  ~OnDevice() {
    if (switched_) Runtime::set_current_context(device_, slot_);
  }

 private:
  int device_;
  uint16_t slot_;
  bool switched_;
};

// The allocation becomes coherent device memory of `device` (the copy
// path's page-locked fast path ends for it).
cudaError_t promote(const HostRange& range, int device, uint64_t* device_address) {
  // Another thread's launch may be promoting it too: the first one does.
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  auto now = MemoryMap::get().find_host(range.base);
  if (!now || now->base != range.base) return cudaErrorInvalidValue;  // freed meanwhile
  if (now->coherent) {
    *device_address = now->device_address ? now->device_address : now->base;
    return cudaSuccess;
  }
  // Copies in flight use its pages, which change hands.
  Runtime::get().finish_background_copies();
  {
    OnDevice on(device);
    if (cudaError_t e = coherent_memory::adopt(range.base, range.size, device_address)) return e;
  }
  HostRange promoted = range;
  promoted.coherent = true;
  promoted.device_address = *device_address;
  MemoryMap::get().add_host(promoted);
  RGPU_LOG(info, "page-locked memory at 0x%llx (%zu bytes) handed to the GPU: now device memory of device %d at 0x%llx, "
           "coherent in software",
           static_cast<unsigned long long>(range.base), range.size, device,
           static_cast<unsigned long long>(*device_address));
  return cudaSuccess;
}

// The reach of kernel_launch.hpp.
cudaError_t reach(const HostRange& range, int device, uint64_t* device_address) {
  if (!range.device_address) return promote(range, device, device_address);
  // Every GPU of its server reaches it; no other GPU does.
  auto home = MemoryMap::get().find_device(range.device_address);
  if (!home || !Runtime::get().device(device) || !same_server(home->device, device)) {
    RGPU_LOG(warn, "kernel launch refused: an argument points at page-locked memory (0x%llx) a kernel of device %d "
             "was handed first, which lies on another server's GPU",
             static_cast<unsigned long long>(range.base), home ? home->device : -1);
    return cudaErrorNotSupported;
  }
  *device_address = range.device_address;
  return cudaSuccess;
}

[[maybe_unused]] const bool g_reach_set = (set_page_locked_reach(reach), true);

// A device range handed out for mapped host memory: the worker's region
// (which for registered memory starts at the page below the range's base)
// and the device address of the host range's base.
struct Mapping {
  uint64_t region;
  uint64_t at_base;
};

// By host base.
struct Mappings {
  std::mutex mutex;
  std::multimap<uint64_t, Mapping> device_base;
};

Mappings& mappings() {
  static auto* m = new Mappings;
  return *m;
}

cudaError_t device_pointer(void** device, void* host) {
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  auto range = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(host));
  if (!range) return cudaErrorInvalidValue;
  const uint64_t offset = reinterpret_cast<uint64_t>(host) - range->base;
  if (range->coherent) {  // one address on both sides, unless promoted
    *device = reinterpret_cast<void*>(range->device_address ? range->device_address + offset
                                                            : reinterpret_cast<uint64_t>(host));
    return cudaSuccess;
  }
  Call call(proto::kOpHostGetDevicePointer);
  if (cudaError_t e = call.to_current_device()) return e;
  // Asked for its device address, the application may store it anywhere:
  // page-locked memory becomes device memory the GPU really has.
  if (!call.device()->session->shares_memory() && !range->registered && range->shared_fd < 0) {
    uint64_t address;
    if (cudaError_t e = promote(*range, call.device_index(), &address)) return e;
    *device = reinterpret_cast<void*>(address + offset);
    return cudaSuccess;
  }
  if (range->shared_fd < 0 || !call.device()->session->shares_memory()) {
    RGPU_LOG(warn, "cudaHostGetDevicePointer: not supported: %s", kHostMemoryReach);
    return cudaErrorNotSupported;
  }
  call.args().put<uint64_t>(reinterpret_cast<uint64_t>(host));
  if (cudaError_t e = call.run()) return e;
  uint64_t address = call.reply().get<uint64_t>();
  uint64_t base = call.reply().get<uint64_t>();
  uint64_t size = call.reply().get<uint64_t>();
  std::lock_guard lock(mappings().mutex);
  // Copies and memsets naming the device address go to this server.
  auto known = MemoryMap::get().find_device(base);
  if (!known) {
    if (!MemoryMap::get().add_device(base, size, call.device_index())) return cudaErrorMemoryAllocation;
    mappings().device_base.emplace(range->base, Mapping{base, address - offset});
  } else if (known->base != base || !same_server(known->device, call.device_index())) {
    return cudaErrorMemoryAllocation;  // the address names other memory of the application
  }  // else mapped for another GPU of this server already: its worker's one mapping
  *device = reinterpret_cast<void*>(address);
  return cudaSuccess;
}

}  // namespace

std::optional<uint64_t> mapped_device_address(uint64_t host) {
  auto range = MemoryMap::get().find_host(host);
  if (!range) return std::nullopt;
  if (range->coherent) return range->device_address ? range->device_address + (host - range->base) : host;
  std::lock_guard lock(mappings().mutex);
  auto it = mappings().device_base.find(range->base);
  if (it == mappings().device_base.end()) return std::nullopt;
  return it->second.at_base + (host - range->base);
}

std::optional<uint64_t> mapped_host_address(uint64_t device) {
  if (auto host = MemoryMap::get().find_host(device); host && host->coherent && !host->device_address) return device;
  if (auto promoted = MemoryMap::get().find_relocated(device)) return promoted->base + (device - promoted->device_address);
  auto range = MemoryMap::get().find_device(device);
  if (!range) return std::nullopt;
  std::lock_guard lock(mappings().mutex);
  for (auto [host_base, mapping] : mappings().device_base)
    if (mapping.region == range->base) return host_base + (device - mapping.at_base);
  return std::nullopt;
}

std::optional<uint64_t> page_locked_device_address(const HostRange& range, uint64_t host) {
  if (auto mapped = mapped_device_address(host)) return mapped;
  if (range.registered && range.shared_fd < 0) return std::nullopt;
  return host;
}

void forget_mapped(uint64_t host_base) {
  std::lock_guard lock(mappings().mutex);
  auto [first, last] = mappings().device_base.equal_range(host_base);
  for (auto it = first; it != last; ++it) MemoryMap::get().remove_device(it->second.region);
  mappings().device_base.erase(first, last);
}

}  // namespace rgpu::client

extern "C" cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!pDevice || !pHost || flags) return cudaErrorInvalidValue;
    return device_pointer(pDevice, pHost);
  });
}

extern "C" cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  return api([&]() -> cudaError_t {
    if (!pFlags) return cudaErrorInvalidValue;
    if (cudaError_t e = Runtime::get().ensure_init()) return e;
    auto range = MemoryMap::get().find_host(reinterpret_cast<uint64_t>(pHost));
    if (!range) return cudaErrorInvalidValue;
    // CUDA leaves cudaHostAllocPortable out beside cudaHostAllocMapped
    // (checked on the H100).
    *pFlags = range->flags & cudaHostAllocMapped ? range->flags & ~cudaHostAllocPortable : range->flags;
    return cudaSuccess;
  });
}
