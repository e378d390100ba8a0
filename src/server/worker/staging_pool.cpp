#include "server/worker/staging_pool.hpp"

#include <algorithm>

namespace rgpu::server {

StagingPool::~StagingPool() {
  for (Slot& s : slots_) {
    if (s.in_flight) backend_.event_synchronize(s.event);
    if (s.buffer) backend_.free_staging(s.buffer);
    if (s.event) backend_.event_destroy(s.event);
    limit_.give_back(s.capacity);
  }
}

int32_t StagingPool::acquire(size_t i, size_t bytes, Slot** out) {
  Slot& s = slots_[i % kSlots];
  if (s.in_flight) {
    if (int32_t e = backend_.event_synchronize(s.event)) return e;
    s.in_flight = false;
  }
  if (s.capacity < bytes) {
    if (s.buffer) backend_.free_staging(s.buffer);
    limit_.give_back(s.capacity);
    s.buffer = nullptr;
    s.capacity = 0;
    size_t cap = std::max(bytes, kBlockBytes);
    if (!limit_.hold(cap, "staging for copies")) return cudaErrorMemoryAllocation;
    // A sticky context error (after a kernel fault) shows up here too.
    if (int32_t e = backend_.alloc_staging(cap, &s.buffer)) {
      limit_.give_back(cap);
      return e;
    }
    s.capacity = cap;
  }
  if (!s.event)
    if (int32_t e = backend_.event_create(&s.event, cudaEventDisableTiming)) return e;
  *out = &s;
  return cudaSuccess;
}

void StagingPool::abandon() {
  for (Slot& s : slots_) {
    limit_.give_back(s.capacity);
    s = Slot{};
  }
}

int32_t StagingPool::release_after(Slot& slot, Handle stream) {
  if (int32_t e = backend_.event_record(slot.event, stream)) return e;
  slot.in_flight = true;
  return cudaSuccess;
}

}  // namespace rgpu::server
