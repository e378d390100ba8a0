#include "client/cudart/staging_ring.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
#include <unordered_map>
#include <unordered_set>

#include "client/core/call.hpp"
#include "client/core/device_shared_memory.hpp"
#include "client/cudart/copy_engine.hpp"
#include "client/cudart/parallel_copy.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::client {
namespace {

constexpr size_t kSlots = 4;
constexpr size_t kSlotBytes = 8u << 20;
// Below this the socket's single copy is as fast as the ring's two.
constexpr size_t kMinBytes = 1u << 20;
// Used by one thread at a time (RingPool hands it out).
class StagingRing {
 public:
  explicit StagingRing(int device) : device_(device) {}
  ~StagingRing() {
    if (mem_.base) transport::release_shared_memory(mem_);
  }

  // Shared memory registered with the device's server, and one event per
  // slot; false if anything failed (the caller then uses the socket).
  bool init() {
    auto m = share_with_device(device_, kSlots * kSlotBytes, "staging ring");
    if (!m) return false;
    mem_ = *m;
    Call call(proto::kOpEventCreate);
    int32_t remote;
    if (call.to_device(device_, &remote)) return false;
    call.args().put<uint32_t>(cudaEventDisableTiming).put<uint32_t>(kSlots);
    if (call.run() || call.reply().get<uint32_t>() != kSlots) return false;
    for (auto& ev : events_) ev = call.reply().get<uint64_t>();
    return true;
  }

  cudaError_t to_device(char* dst, const char* src, size_t n, cudaStream_t stream, bool async) {
    for (size_t off = 0, i = 0; off < n; off += kSlotBytes, ++i) {
      size_t len = std::min(kSlotBytes, n - off);
      char* slot = this->slot(i);
      if (cudaError_t e = wait(i % kSlots)) return e;
      parallel_memcpy(slot, src + off, len);
      if (cudaError_t e = copy_shared(device_, dst + off, slot, len, true, false, stream, true)) return e;
      if (cudaError_t e = record(i % kSlots, stream)) return e;
    }
    return async ? cudaSuccess : wait_all();
  }

  cudaError_t to_host(char* dst, const char* src, size_t n, cudaStream_t stream) {
    size_t chunks = (n + kSlotBytes - 1) / kSlotBytes;
    auto start = [&](size_t i) -> cudaError_t {
      if (i >= chunks) return cudaSuccess;
      size_t off = i * kSlotBytes, len = std::min(kSlotBytes, n - off);
      if (cudaError_t e = wait(i % kSlots)) return e;
      if (cudaError_t e = copy_shared(device_, src + off, slot(i), len, false, false, stream, true)) return e;
      return record(i % kSlots, stream);
    };
    for (size_t i = 0; i < kSlots; ++i)
      if (cudaError_t e = start(i)) return e;
    for (size_t i = 0; i < chunks; ++i) {
      if (cudaError_t e = wait(i % kSlots)) return e;
      size_t off = i * kSlotBytes;
      parallel_memcpy(dst + off, slot(i), std::min(kSlotBytes, n - off));
      if (cudaError_t e = start(i + kSlots)) return e;
    }
    return cudaSuccess;
  }

 private:
  char* slot(size_t i) { return static_cast<char*>(mem_.base) + (i % kSlots) * kSlotBytes; }

  // The GPU is done with slot i once its event has completed.
  cudaError_t wait(size_t i) {
    if (!pending_[i]) return cudaSuccess;
    Call call(proto::kOpEventSynchronize);
    int32_t remote;
    if (cudaError_t e = call.to_device(device_, &remote)) return e;
    call.args().put<uint64_t>(events_[i]);
    pending_[i] = false;
    return call.run();
  }

  cudaError_t wait_all() {
    for (size_t i = 0; i < kSlots; ++i)
      if (cudaError_t e = wait(i)) return e;
    return cudaSuccess;
  }

  cudaError_t record(size_t i, cudaStream_t stream) {
    Call call(proto::kOpEventRecord);
    uint64_t s;
    if (cudaError_t e = route_to_memory(call, device_, stream, &s)) return e;
    call.args().put<uint64_t>(events_[i]).put<uint64_t>(s);
    pending_[i] = true;
    return call.post();
  }

  int device_;
  transport::SharedMemory mem_;
  uint64_t events_[kSlots] = {};
  bool pending_[kSlots] = {};
};

// Each application thread copying at the same time gets a ring of its own,
// so one thread's copy (which may wait for the GPU) never holds up
// another's; past kMaxRings per device, copies go through the connection.
constexpr size_t kMaxRings = 4;

class RingPool {
 public:
  StagingRing* acquire(int device) {
    std::lock_guard lock(mutex_);
    auto& rings = rings_[device];
    for (auto& r : rings)
      if (!r.busy) {
        r.busy = true;
        return r.ring;
      }
    if (rings.size() >= kMaxRings || broken_.contains(device)) return nullptr;
    auto* ring = new StagingRing(device);
    if (!ring->init()) {
      delete ring;
      broken_.insert(device);
      return nullptr;
    }
    rings.push_back({ring, true});
    return ring;
  }
  void forget(int device) {
    std::lock_guard lock(mutex_);
    for (auto& r : rings_[device]) delete r.ring;
    rings_.erase(device);
    broken_.erase(device);
  }
  void release(int device, StagingRing* ring) {
    std::lock_guard lock(mutex_);
    for (auto& r : rings_[device])
      if (r.ring == ring) r.busy = false;
  }

 private:
  struct Entry {
    StagingRing* ring;  // lives until its device's session moves
    bool busy;
  };
  std::mutex mutex_;
  std::unordered_map<int, std::vector<Entry>> rings_;
  std::unordered_set<int> broken_;  // devices where a ring could not be made
};

RingPool& ring_pool() {
  static auto* pool = new RingPool;
  return *pool;
}

// Runs f on a free ring of `device`; false when the copy does not suit a
// ring or none is free.
template <typename F>
bool with_ring(int device, size_t n, F&& f) {
  VirtualDevice* d = Runtime::get().device(device);
  if (n < kMinBytes || !d || !d->session->shares_memory()) return false;
  StagingRing* ring = ring_pool().acquire(device);
  if (!ring) return false;
  f(*ring);
  ring_pool().release(device, ring);
  return true;
}

}  // namespace

bool ring_copy_to_device(int device, void* dst, const void* src, size_t n, cudaStream_t stream, bool async,
                         cudaError_t* status) {
  return with_ring(device, n, [&](StagingRing& r) {
    *status = r.to_device(static_cast<char*>(dst), static_cast<const char*>(src), n, stream, async);
  });
}

bool ring_copy_to_host(int device, void* dst, const void* src, size_t n, cudaStream_t stream,
                       cudaError_t* status) {
  return with_ring(device, n, [&](StagingRing& r) {
    *status = r.to_host(static_cast<char*>(dst), static_cast<const char*>(src), n, stream);
  });
}

void forget_staging_rings(int device) { ring_pool().forget(device); }

}  // namespace rgpu::client
