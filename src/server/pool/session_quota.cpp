#include "server/pool/session_quota.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace rgpu::server {
namespace {

// What an allocation of `size` bytes holds of the GPU: whole blocks.
uint64_t charged_bytes(uint64_t size) {
  const uint64_t block = size <= kLargeAllocationThreshold ? kDeviceAllocationGranularity : kLargeAllocationGranularity;
  return size > UINT64_MAX - (block - 1) ? UINT64_MAX : (size + block - 1) / block * block;
}

}  // namespace

void SessionQuota::give_back(int gpu, uint64_t bytes) {
  limit_.give_back(bytes);
  if (ledger_) ledger_->release(worker_, gpu, bytes);
}

int32_t SessionQuota::allocate(int gpu, uint64_t size, Kind kind, const uint64_t* name,
                               const std::function<int32_t()>& allocate) {
  if (!ledger_ && !limit_.limit() && !count_.limit()) return allocate();
  {
    std::lock_guard lock(mutex_);
    if (!count_.room_for_one_more(charges_.size())) return cudaErrorMemoryAllocation;
  }
  const uint64_t bytes = charged_bytes(size);
  if (!limit_.hold(bytes, "device memory")) return cudaErrorMemoryAllocation;
  if (ledger_ && !ledger_->charge(worker_, gpu, bytes)) {
    limit_.give_back(bytes);
    return cudaErrorMemoryAllocation;
  }
  int32_t e = allocate();
  std::lock_guard lock(mutex_);
  if (e != cudaSuccess || *name == 0) {
    give_back(gpu, bytes);
    return e;
  }
  auto [it, fresh] = charges_.try_emplace({kind, *name}, Charge{gpu, bytes});
  // A name the backend hands out again was freed behind our back (a device
  // reset): its old charge is over.
  if (!fresh) {
    give_back(it->second.gpu, it->second.bytes);
    it->second = Charge{gpu, bytes};
  }
  return e;
}

void SessionQuota::freed(Kind kind, uint64_t name) {
  std::lock_guard lock(mutex_);
  auto it = charges_.find({kind, name});
  if (it == charges_.end()) return;
  give_back(it->second.gpu, it->second.bytes);
  charges_.erase(it);
}

void SessionQuota::reset(int gpu) {
  std::lock_guard lock(mutex_);
  std::erase_if(charges_, [&](const auto& entry) {
    if (entry.second.gpu != gpu) return false;
    give_back(gpu, entry.second.bytes);
    return true;
  });
}

void SessionQuota::view(int gpu, size_t* free, size_t* total) {
  uint64_t amount = 0, used = 0;
  if (ledger_ && ledger_->quota(worker_, gpu, &amount, &used)) {
    *total = amount;
    *free = std::min<uint64_t>(*free, amount - std::min(used, amount));
  }
  const uint64_t limit = limit_.limit();
  if (!limit) return;
  *total = std::min<uint64_t>(*total, limit);
  *free = std::min<uint64_t>(*free, limit - std::min(limit_.held(), limit));
}

}  // namespace rgpu::server
