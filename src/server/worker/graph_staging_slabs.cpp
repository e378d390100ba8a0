#include "server/worker/graph_staging_slabs.hpp"

namespace rgpu::server {

GraphStagingSlabs::~GraphStagingSlabs() {
  for (auto& [device, p] : slabs_) backend_.free_staging(p);
}

void GraphStagingSlabs::release(int device) {
  std::lock_guard lock(mutex_);
  auto [from, to] = slabs_.equal_range(device);
  for (auto it = from; it != to; ++it) {
    limit_.give_back(table_.remove(reinterpret_cast<uint64_t>(it->second)));
    backend_.free_staging(it->second);
  }
  slabs_.erase(from, to);
}

int32_t GraphStagingSlabs::allocate(int device, uint64_t bytes, uint64_t* base) {
  if (bytes == 0) return cudaErrorInvalidValue;
  if (!limit_.hold(bytes, "staging for graph copies")) return cudaErrorMemoryAllocation;
  void* p = nullptr;
  if (int32_t e = backend_.alloc_staging(bytes, &p)) {
    limit_.give_back(bytes);
    return e;
  }
  *base = reinterpret_cast<uint64_t>(p);
  std::lock_guard lock(mutex_);
  table_.add(*base, bytes);
  slabs_.emplace(device, p);
  return cudaSuccess;
}

}  // namespace rgpu::server
