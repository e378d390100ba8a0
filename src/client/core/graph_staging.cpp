#include "client/core/graph_staging.hpp"

#include <bit>
#include <memory>

#include "client/core/runtime.hpp"
#include "client/core/session.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::client {

StagingBlock StagingBlocks::take(size_t n) {
  size_t size = std::bit_ceil(std::max(n, kMinBlock));
  std::lock_guard lock(mutex_);
  if (auto& blocks = free_[size]; !blocks.empty()) {
    char* base = blocks.back();
    blocks.pop_back();
    return {base, size};
  }
  if (size > kMaxCarved) return {source_(size), size};
  if (slab_left_ < size) {
    // The rest of the old slab, smaller than this block, stays unused.
    slab_ = source_(kSlabBytes);
    slab_left_ = slab_ ? kSlabBytes : 0;
    if (!slab_) return {};
  }
  char* base = slab_ + (kSlabBytes - slab_left_);
  slab_left_ -= size;
  return {base, size};
}

void StagingBlocks::give_back(StagingBlock b) {
  if (!b.base) return;
  std::lock_guard lock(mutex_);
  free_[b.size].push_back(b.base);
}

namespace {

// A slab of memory the device's server maps and page-locks, or null.
char* shared_slab(int device, size_t bytes) {
  VirtualDevice* d = Runtime::get().device(device);
  if (!d || !d->session->shares_memory()) return nullptr;
  transport::SharedMemory m;
  try {
    m = transport::create_shared_memory(bytes);
  } catch (const transport::TransportError& e) {
    RGPU_LOG(warn, "no staging memory for graph copies: %s", e.what());
    return nullptr;
  }
  proto::Writer w;
  w.put<uint64_t>(reinterpret_cast<uint64_t>(m.base)).put<uint64_t>(m.size);
  std::vector<uint8_t> reply;
  if (d->session->call_with_fd(proto::kOpHostRegisterShared, d->remote, w.bytes(), m.fd, reply) != cudaSuccess) {
    transport::release_shared_memory(m);
    return nullptr;
  }
  return static_cast<char*>(m.base);
}

}  // namespace

StagingBlocks& graph_staging(int device) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::unique_ptr<StagingBlocks>>;
  std::lock_guard lock(mutex);
  auto& pool = (*pools)[device];
  if (!pool) pool = std::make_unique<StagingBlocks>([device](size_t bytes) { return shared_slab(device, bytes); });
  return *pool;
}

}  // namespace rgpu::client
