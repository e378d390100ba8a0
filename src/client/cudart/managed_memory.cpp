#include "client/cudart/managed_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "client/core/api_guard.hpp"
#include "client/core/address_range_lookup.hpp"
#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cudart/coherent_memory.hpp"
#include "client/cudart/shared_host_memory.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/shared_memory.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace rgpu::client {
namespace {

// Managed memory is placed where neither the application's nor a worker's
// own mappings go (they grow down from the top of the address space), so
// each worker can map it at the same address. Where the address is taken
// (a driver may reserve large ranges), the next try starts far beyond.
constexpr uint64_t kManagedRegion = 0x200000000000ull;
constexpr uint64_t kSlotAlign = 2ull << 20;
constexpr uint64_t kSkipOnCollision = 1ull << 40;
constexpr int kAttempts = 8;
std::atomic<uint64_t> g_next_slot{kManagedRegion};

struct Registry {
  std::mutex mutex;
  std::map<uint64_t, ManagedRange> ranges;  // by base
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// Every GPU must reach the memory, so every server must share it.
bool all_servers_share_memory() {
  Runtime& rt = Runtime::get();
  for (int i = 0; i < rt.device_count(); ++i)
    if (!rt.device(i)->session->shares_memory()) return false;
  return rt.device_count() > 0;
}

// One attempt at the next free slot: maps it here and in every worker.
cudaError_t try_slot(size_t size, int fd, uint64_t* base) {
  uint64_t slot = g_next_slot.fetch_add((size + 2 * kSlotAlign - 1) / kSlotAlign * kSlotAlign);
  void* want = reinterpret_cast<void*>(slot);
  void* p = mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
  if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
  if (p != want) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    munmap(p, size);
    return cudaErrorMemoryAllocation;
  }
  if (cudaError_t e = map_on_servers(kManagedShare, slot, size, fd)) {
    munmap(p, size);
    return e;
  }
  *base = slot;
  return cudaSuccess;
}

void remember(uint64_t base, size_t bytes, int device, int fd, bool variable = false) {
  ManagedRange r;
  r.base = base;
  r.size = bytes;
  r.device = device;
  r.fd = fd;
  r.variable = variable;
  std::lock_guard lock(registry().mutex);
  registry().ranges[base] = r;
}

// Where some GPU cannot reach this process's pages: device memory of the
// current device with a software-coherent copy here (coherent_memory.hpp).
cudaError_t malloc_coherent(void** ptr, size_t bytes) {
  uint64_t base = 0;
  if (cudaError_t e = coherent_memory::allocate(bytes, false, &base)) return e;
  remember(base, bytes, Runtime::current_device(), -1);
  *ptr = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

cudaError_t malloc_managed(void** ptr, size_t size, unsigned flags) {
  if (!ptr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
    return cudaErrorInvalidValue;
  if (cudaError_t e = Runtime::get().ensure_init()) return e;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = (size + page - 1) / page * page;
  if (!all_servers_share_memory()) return malloc_coherent(ptr, bytes);
  // Sealed at its size: the workers that map it refuse memory that could shrink.
  int fd = transport::create_sealed_memfd("rgpu-managed", bytes);
  if (fd < 0) return cudaErrorMemoryAllocation;
  uint64_t base = 0;
  cudaError_t e = cudaErrorMemoryAllocation;
  for (int i = 0; i < kAttempts && e == cudaErrorMemoryAllocation; ++i) {
    if (i > 0) g_next_slot.fetch_add(kSkipOnCollision);
    e = try_slot(bytes, fd, &base);
  }
  if (e) {
    close(fd);
    return e;
  }
  int device = Runtime::current_device();
  // Copies and memsets naming the memory go to the current device's server.
  if (!MemoryMap::get().add_device(base, bytes, device)) {
    unmap_on_servers(kManagedShare, base, Runtime::get().sharing_sessions().size());
    munmap(reinterpret_cast<void*>(base), bytes);
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  remember(base, bytes, device, fd);
  *ptr = reinterpret_cast<void*>(base);
  return cudaSuccess;
}

}  // namespace

std::optional<ManagedRange> find_managed(uint64_t ptr, size_t n) {
  std::lock_guard lock(registry().mutex);
  return find_range(registry().ranges, ptr, n);
}

bool update_managed(uint64_t ptr, const std::function<void(ManagedRange&)>& update) {
  std::lock_guard lock(registry().mutex);
  auto& m = registry().ranges;
  auto it = m.upper_bound(ptr);
  if (it == m.begin()) return false;
  --it;
  if (ptr - it->first >= it->second.size) return false;
  update(it->second);
  return true;
}

// As in CUDA, freeing waits for the GPUs: queued work may still use it.
cudaError_t free_managed(uint64_t base) {
  ManagedRange r;
  {
    std::lock_guard lock(registry().mutex);
    auto it = registry().ranges.find(base);
    if (it == registry().ranges.end() || it->second.variable) return cudaErrorInvalidValue;
    r = it->second;
    registry().ranges.erase(it);
  }
  Runtime& rt = Runtime::get();
  for (int i = 0; i < rt.device_count(); ++i) {
    Call sync(proto::kOpDeviceSynchronize);
    int32_t remote;
    if (sync.to_device(i, &remote) == cudaSuccess) sync.run();
  }
  if (r.fd < 0) return coherent_memory::release(base);
  MemoryMap::get().remove_device(base);
  unmap_on_servers(kManagedShare, base, rt.sharing_sessions().size());
  munmap(reinterpret_cast<void*>(base), r.size);
  close(r.fd);
  return cudaSuccess;
}

cudaError_t add_managed_variable(uint64_t address, size_t size, int device) {
  if (auto known = find_managed(address); known && known->variable && known->base == address) return cudaSuccess;
  if (cudaError_t e = coherent_memory::add_variable(address, size)) return e;
  remember(address, size, device, -1, true);
  return cudaSuccess;
}

void remove_managed_variable(uint64_t address) {
  {
    std::lock_guard lock(registry().mutex);
    auto it = registry().ranges.find(address);
    if (it == registry().ranges.end() || !it->second.variable) return;
    registry().ranges.erase(it);
  }
  coherent_memory::remove_variable(address);
}

}  // namespace rgpu::client

extern "C" cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  return api([&] { return malloc_managed(devPtr, size, flags); });
}
