#include "client/core/memory_map.hpp"

#include <cstring>

#include "client/core/address_range_lookup.hpp"
#include "client/core/transport_choice.hpp"

namespace rgpu::client {

MemoryMap& MemoryMap::get() {
  static auto* m = new MemoryMap;
  return *m;
}

namespace {

// The last byte of r (an empty range counts as its first byte).
uint64_t last_byte(const DeviceRange& r) { return r.base + (r.size ? r.size - 1 : 0); }

// Whether o shares a byte with r.
bool overlaps(const DeviceRange& r, const DeviceRange& o) { return o.base <= last_byte(r) && o.base + o.size > r.base; }

}  // namespace

bool MemoryMap::insert_device(const DeviceRange& r) {
  std::lock_guard lock(mutex_);
  // A graph allocation's end is not seen here (a graph freed it, or was
  // destroyed, on the GPU): its device reusing the address proves it gone.
  std::erase_if(device_, [&](const auto& kv) {
    return kv.second.graph_memory && kv.second.device == r.device && overlaps(r, kv.second);
  });
  if (overlaps_known(r)) return false;
  device_[r.base] = r;
  return true;
}

bool MemoryMap::overlaps_known(const DeviceRange& r) const {
  auto it = device_.upper_bound(last_byte(r));
  return it != device_.begin() && overlaps(r, std::prev(it)->second);
}

bool MemoryMap::add_device(uint64_t base, size_t size, int device) {
  return insert_device(DeviceRange{base, size, device});
}

bool MemoryMap::add_graph_memory(uint64_t base, size_t size, int device, uint64_t graph) {
  DeviceRange r{base, size, device};
  r.graph_memory = true;
  r.graph = graph;
  return insert_device(r);
}

bool MemoryMap::add_moved_variable(uint64_t base, size_t size, int device, uint64_t now_at) {
  DeviceRange r{base, size, device};
  r.moved_to = now_at;
  remove_device(base);  // an earlier move's
  if (!insert_device(r)) return false;
  moved_variables_.store(true, std::memory_order_release);
  return true;
}

void MemoryMap::follow_moved_variables(std::span<uint8_t> args) const {
  if (!moved_variables_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  for (size_t offset = 0; offset + sizeof(uint64_t) <= args.size(); offset += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, args.data() + offset, sizeof word);
    auto r = find_range(device_, word, 1);
    if (!r || !r->moved_to) continue;
    word = r->moved_to + (word - r->base);
    std::memcpy(args.data() + offset, &word, sizeof word);
  }
}

void MemoryMap::graph_frees(uint64_t base, uint64_t graph) {
  std::lock_guard lock(mutex_);
  auto it = device_.find(base);
  if (it != device_.end() && it->second.graph_memory && it->second.graph == graph) it->second.freed_in_graph = true;
}

void MemoryMap::graph_destroyed(uint64_t graph) {
  std::lock_guard lock(mutex_);
  for (auto it = device_.begin(); it != device_.end();) {
    DeviceRange& r = it->second;
    if (!r.graph_memory || r.graph != graph) {
      ++it;
    } else if (r.freed_in_graph) {
      it = device_.erase(it);
    } else {
      r.graph = 0;  // no graph tag outlives its graph: the handle may name another graph later
      ++it;
    }
  }
}

void MemoryMap::graph_instantiated(uint64_t graph, uint64_t exec) {
  std::lock_guard lock(mutex_);
  std::vector<DeviceRange> left;
  for (const auto& [base, r] : device_)
    if (r.graph_memory && r.graph == graph && !r.freed_in_graph) {
      left.push_back(r);
      left.back().graph = 0;  // the exec outlives its graph's tag
    }
  if (!left.empty()) exec_memory_[exec] = std::move(left);
}

void MemoryMap::graph_launched(uint64_t exec) {
  std::lock_guard lock(mutex_);
  auto it = exec_memory_.find(exec);
  if (it == exec_memory_.end()) return;
  for (const DeviceRange& r : it->second)
    if (!overlaps_known(r)) device_.emplace(r.base, r);
}

void MemoryMap::exec_destroyed(uint64_t exec) {
  std::lock_guard lock(mutex_);
  exec_memory_.erase(exec);
}

std::optional<DeviceRange> MemoryMap::freeable(uint64_t base) const {
  std::lock_guard lock(mutex_);
  auto it = device_.find(base);
  if (it == device_.end() || it->second.freed_in_graph) return std::nullopt;
  return it->second;
}

template <typename R>
std::optional<R> MemoryMap::remove(std::map<uint64_t, R>& m, uint64_t base) {
  std::lock_guard lock(mutex_);
  auto it = m.find(base);
  if (it == m.end()) return std::nullopt;
  R r = it->second;
  m.erase(it);
  return r;
}

std::optional<DeviceRange> MemoryMap::remove_device(uint64_t base) { return remove(device_, base); }

std::optional<DeviceRange> MemoryMap::find_device(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  return find_range(device_, ptr, n == 0 ? 1 : n);
}

void MemoryMap::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(device_, [device](const auto& kv) { return kv.second.device == device; });
}

std::vector<DeviceRange> MemoryMap::device_ranges(int device) const {
  std::lock_guard lock(mutex_);
  std::vector<DeviceRange> out;
  for (const auto& [base, r] : device_)
    if (r.device == device) out.push_back(r);
  return out;
}

namespace {

// The counter of the kind of page-locked range r is (null for coherent ones).
std::atomic<int>* host_kind(const HostRange& r, std::atomic<int>& unshared, std::atomic<int>& shared) {
  if (r.coherent) return nullptr;
  return r.shared_fd >= 0 ? &shared : &unshared;
}

}  // namespace

void MemoryMap::add_host(const HostRange& r) {
  bool was_page_locked = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = host_.find(r.base); it != host_.end()) {
      was_page_locked = !it->second.coherent;
      if (auto* kind = host_kind(it->second, unshared_host_, shared_host_)) kind->fetch_sub(1);
      if (it->second.device_address) relocated_host_.fetch_sub(1);
    }
    host_.insert_or_assign(r.base, r);
    if (auto* kind = host_kind(r, unshared_host_, shared_host_)) kind->fetch_add(1);
    if (r.device_address) relocated_host_.fetch_add(1);
  }
  // Coherent ranges change under software coherence: never kept registered
  // (page-locked memory promoted to coherent is no longer).
  if (!r.coherent)
    page_locked_added(r.base, r.size);
  else if (was_page_locked)
    page_locked_removed(r.base);
}

std::optional<HostRange> MemoryMap::find_shared(uint64_t ptr, size_t n) const {
  std::lock_guard lock(mutex_);
  auto r = find_range(host_, ptr, n == 0 ? 1 : n);
  if (!r || r->shared_fd < 0) return std::nullopt;
  return r;
}

std::optional<HostRange> MemoryMap::remove_host(uint64_t base) {
  auto r = remove(host_, base);
  if (auto* kind = r ? host_kind(*r, unshared_host_, shared_host_) : nullptr) kind->fetch_sub(1);
  if (r && r->device_address) relocated_host_.fetch_sub(1);
  if (r && !r->coherent) page_locked_removed(base);
  return r;
}

std::vector<HostRange> MemoryMap::page_locked_ranges() const {
  std::lock_guard lock(mutex_);
  std::vector<HostRange> ranges;
  for (const auto& [base, r] : host_)
    if (!r.coherent) ranges.push_back(r);
  return ranges;
}

std::vector<std::pair<size_t, HostRange>> MemoryMap::host_ranges_named(std::span<const uint8_t> bytes) const {
  std::vector<std::pair<size_t, HostRange>> named;
  std::lock_guard lock(mutex_);
  if (host_.empty()) return named;
  for (size_t offset = 0; offset + sizeof(uint64_t) <= bytes.size(); offset += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + offset, sizeof word);
    if (auto r = find_range(host_, word, 1)) named.emplace_back(offset, *r);
  }
  return named;
}

std::optional<HostRange> MemoryMap::find_relocated(uint64_t device_ptr) const {
  if (relocated_host_.load(std::memory_order_acquire) == 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  for (const auto& [base, r] : host_)
    if (r.device_address && device_ptr - r.device_address < r.size) return r;
  return std::nullopt;
}

std::optional<uint64_t> MemoryMap::device_side(uint64_t ptr) const {
  if (moved_variables_.load(std::memory_order_acquire))
    if (auto moved = find_device(ptr); moved && moved->moved_to) return moved->moved_to + (ptr - moved->base);
  if (relocated_host_.load(std::memory_order_acquire) == 0) return std::nullopt;
  auto r = find_host(ptr);
  if (!r || !r->device_address) return std::nullopt;
  return r->device_address + (ptr - r->base);
}

std::optional<HostRange> MemoryMap::find_host(uint64_t ptr) const {
  std::lock_guard lock(mutex_);
  return find_range(host_, ptr, 1);
}

}  // namespace rgpu::client
