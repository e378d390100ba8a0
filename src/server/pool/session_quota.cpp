#include "server/pool/session_quota.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace rgpu::server {

int32_t SessionQuota::allocate(int gpu, uint64_t bytes, Kind kind, const uint64_t* name,
                               const std::function<int32_t()>& allocate) {
  if (!ledger_) return allocate();
  if (!ledger_->charge(worker_, gpu, bytes)) return cudaErrorMemoryAllocation;
  int32_t e = allocate();
  if (e != cudaSuccess || *name == 0) {
    ledger_->release(worker_, gpu, bytes);
    return e;
  }
  std::lock_guard lock(mutex_);
  auto [it, fresh] = charges_.try_emplace({kind, *name}, Charge{gpu, bytes});
  // A name the backend hands out again was freed behind our back (a device
  // reset): its old charge is over.
  if (!fresh) {
    ledger_->release(worker_, it->second.gpu, it->second.bytes);
    it->second = Charge{gpu, bytes};
  }
  return e;
}

void SessionQuota::freed(Kind kind, uint64_t name) {
  if (!ledger_) return;
  std::lock_guard lock(mutex_);
  auto it = charges_.find({kind, name});
  if (it == charges_.end()) return;
  ledger_->release(worker_, it->second.gpu, it->second.bytes);
  charges_.erase(it);
}

void SessionQuota::reset(int gpu) {
  if (!ledger_) return;
  std::lock_guard lock(mutex_);
  std::erase_if(charges_, [&](const auto& entry) {
    if (entry.second.gpu != gpu) return false;
    ledger_->release(worker_, gpu, entry.second.bytes);
    return true;
  });
}

void SessionQuota::job_view(int gpu, size_t* free, size_t* total) {
  uint64_t amount = 0, used = 0;
  if (!ledger_ || !ledger_->quota(worker_, gpu, &amount, &used)) return;
  *total = amount;
  *free = std::min<uint64_t>(*free, amount - std::min(used, amount));
}

}  // namespace rgpu::server
