#include "server/worker/graph_staging_slabs.hpp"

#include "common/log.hpp"

namespace rgpu::server {

GraphStagingSlabs::~GraphStagingSlabs() {
  for (auto& [device, p] : slabs_) backend_.free_staging(p);
}

void GraphStagingSlabs::release(int device) {
  std::lock_guard lock(mutex_);
  auto [from, to] = slabs_.equal_range(device);
  for (auto it = from; it != to; ++it) {
    table_.remove(reinterpret_cast<uint64_t>(it->second));
    backend_.free_staging(it->second);
  }
  slabs_.erase(from, to);
}

int32_t GraphStagingSlabs::allocate(int device, uint64_t bytes, uint64_t* base) {
  if (bytes == 0) return cudaErrorInvalidValue;
  MemoryReservation held(table_, bytes);
  if (!held) {
    RGPU_LOG(warn, "%llu bytes of staging for graph copies refused: the session holds its most memory "
                   "(max-session-memory %llu)",
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(table_.limit()));
    return cudaErrorMemoryAllocation;
  }
  void* p = nullptr;
  if (int32_t e = backend_.alloc_staging(bytes, &p)) return e;
  *base = reinterpret_cast<uint64_t>(p);
  std::lock_guard lock(mutex_);
  table_.add(*base, bytes);
  slabs_.emplace(device, p);
  return cudaSuccess;
}

}  // namespace rgpu::server
