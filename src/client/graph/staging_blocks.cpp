#include "client/graph/staging_blocks.hpp"

#include <algorithm>
#include <bit>
#include <memory>

#include "client/core/device_shared_memory.hpp"
#include "client/graph/server_calls.hpp"
#include "client/core/runtime.hpp"
#include "client/core/session.hpp"

namespace rgpu::client {

StagingBlock StagingBlocks::take(size_t n) {
  if (n > kMaxBlock) return {};
  size_t size = std::bit_ceil(std::max(n, kMinBlock));
  std::lock_guard lock(mutex_);
  if (auto& blocks = free_[size]; !blocks.empty()) {
    char* base = blocks.back();
    blocks.pop_back();
    return {base, size, generation_};
  }
  if (size > kMaxCarved) return {source_(size), size, generation_};
  if (slab_left_ < size) {
    // The rest of the old slab, smaller than this block, stays unused.
    slab_ = source_(kSlabBytes);
    slab_left_ = slab_ ? kSlabBytes : 0;
    if (!slab_) return {};
  }
  char* base = slab_ + (kSlabBytes - slab_left_);
  slab_left_ -= size;
  return {base, size, generation_};
}

void StagingBlocks::give_back(StagingBlock b) {
  std::lock_guard lock(mutex_);
  if (b.base && b.generation == generation_) free_[b.size].push_back(b.base);
}

void StagingBlocks::forget() {
  std::lock_guard lock(mutex_);
  free_.clear();
  slab_ = nullptr;
  slab_left_ = 0;
  ++generation_;
}

namespace {

// A slab of memory the device's server maps and page-locks, or else one of
// the worker's page-locked memory; null when there is none.
char* slab(int device, size_t bytes) {
  VirtualDevice* dev = Runtime::get().device(device);
  if (!dev) return nullptr;
  if (!dev->session->shares_memory()) {
    uint64_t address = 0;
    return graph_staging_alloc(device, bytes, &address) ? nullptr : reinterpret_cast<char*>(address);
  }
  auto m = share_with_device(device, bytes, "staging memory for graph copies");
  return m ? static_cast<char*>(m->base) : nullptr;
}

}  // namespace

StagingBlocks& graph_staging(int device) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::unique_ptr<StagingBlocks>>;
  std::lock_guard lock(mutex);
  auto& pool = (*pools)[device];
  if (!pool) pool = std::make_unique<StagingBlocks>([device](size_t bytes) { return slab(device, bytes); });
  return *pool;
}

}  // namespace rgpu::client
