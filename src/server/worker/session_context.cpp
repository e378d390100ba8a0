#include "server/worker/session_context.hpp"

#include <sys/mman.h>

#include <algorithm>

#include "common/log.hpp"

namespace rgpu::server {

SessionContext::~SessionContext() {
  // A peer that never ends its rank keeps an end waiting: the worker goes
  // on to exit after a while, as its session is over.
  if (!nccl_comms.abort_all(backend_.nccl(), std::chrono::seconds(30)))
    RGPU_LOG(warn, "NCCL communicator ends still wait for their peers at the session's end");
  for (auto& [base, region] : shared_) {
    backend_.host_unregister(region.local);
    munmap(region.local, region.size);
  }
}

void* SessionContext::shared_host(uint64_t client_ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  auto it = shared_.upper_bound(client_ptr);
  if (it == shared_.begin()) return nullptr;
  --it;
  uint64_t offset = client_ptr - it->first;
  if (offset > it->second.size || n > it->second.size - offset) return nullptr;
  return static_cast<char*>(it->second.local) + offset;
}

std::optional<std::pair<uint64_t, SharedRegion>> SessionContext::shared_region(uint64_t client_ptr) const {
  std::lock_guard lock(mutex_);
  auto it = shared_.upper_bound(client_ptr);
  if (it == shared_.begin()) return std::nullopt;
  --it;
  if (client_ptr - it->first >= it->second.size) return std::nullopt;
  return *it;
}

std::optional<uint64_t> SessionContext::shared_client(uint64_t local, size_t n) const {
  std::lock_guard lock(mutex_);
  // Few regions: a scan is enough for the rare graph parameter read.
  for (const auto& [base, region] : shared_) {
    uint64_t start = reinterpret_cast<uint64_t>(region.local);
    if (local >= start && local - start <= region.size && n <= region.size - (local - start))
      return base + (local - start);
  }
  return std::nullopt;
}

bool SessionContext::add_shared(uint64_t client_base, SharedRegion region) {
  std::lock_guard lock(mutex_);
  return shared_.try_emplace(client_base, region).second;
}

std::optional<SharedRegion> SessionContext::take_shared(uint64_t client_base) {
  std::lock_guard lock(mutex_);
  auto node = shared_.extract(client_base);
  if (node.empty()) return std::nullopt;
  return node.mapped();
}

void SessionContext::note_reset(int device) {
  std::lock_guard lock(mutex_);
  ++resets_[device];
}

uint64_t SessionContext::reset_epoch(int device) const {
  std::lock_guard lock(mutex_);
  auto it = resets_.find(device);
  return it == resets_.end() ? 0 : it->second;
}

void SessionContext::bound(const SessionBounds& bounds) {
  bounds_ = bounds;
  streams.set_limit(bounds.max_streams);
  events.set_limit(bounds.max_events);
  modules.set_limit(bounds.max_modules);
  graphs.set_limits(bounds.max_graphs, bounds.max_graph_nodes);
  graphs.set_object_limit(bounds.max_objects);
  pools.set_limit(bounds.max_objects);
  textures.set_limit(bounds.max_objects);
  surfaces.set_limit(bounds.max_objects);
  texrefs.set_limit(bounds.max_objects);
  external_memories.set_limit(bounds.max_objects);
  external_semaphores.set_limit(bounds.max_objects);
  quota.set_count_limit(bounds.max_allocations);
}

bool SessionContext::fits_module(uint64_t bytes) {
  if (!bounds_.max_module_bytes || bytes <= bounds_.max_module_bytes) return true;
  if (!logged_large_module_.exchange(true))
    RGPU_LOG(warn, "a module image of %llu bytes refused: larger than max-module-bytes %llu (logged once)",
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bounds_.max_module_bytes));
  return false;
}

bool SessionContext::has_gpu(int ordinal) const {
  return std::find(gpus_.begin(), gpus_.end(), ordinal) != gpus_.end();
}

}  // namespace rgpu::server
