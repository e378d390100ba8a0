#include "server/worker/session_context.hpp"

#include <sys/mman.h>

#include <algorithm>

namespace rgpu::server {

SessionContext::~SessionContext() {
  for (auto& [base, region] : shared) {
    backend_.host_unregister(region.local);
    munmap(region.local, region.size);
  }
}

void* SessionContext::shared_host(uint64_t client_ptr, size_t n) const {
  auto it = shared.upper_bound(client_ptr);
  if (it == shared.begin()) return nullptr;
  --it;
  uint64_t offset = client_ptr - it->first;
  if (offset > it->second.size || n > it->second.size - offset) return nullptr;
  return static_cast<char*>(it->second.local) + offset;
}

bool SessionContext::has_gpu(int ordinal) const {
  return std::find(gpus_.begin(), gpus_.end(), ordinal) != gpus_.end();
}

StagingPool& SessionContext::staging(int device) {
  auto& pool = staging_[device];
  if (!pool) pool = std::make_unique<StagingPool>(backend_);
  return *pool;
}

}  // namespace rgpu::server
