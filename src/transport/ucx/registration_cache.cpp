#include "transport/ucx/registration_cache.hpp"

#include <string>

#include "transport/transport.hpp"
#include "transport/ucx/ucx_context.hpp"

namespace rgpu::transport::ucx {
namespace {

ucs_status_t map(const void* p, size_t len, ucp_mem_h* memh) {
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = const_cast<void*>(p);
  params.length = len;
  return ucp_mem_map(context(), &params, memh);
}

}  // namespace

RegistrationCache& RegistrationCache::get() {
  // Never destroyed: connections may outlive static destructors.
  static auto* cache = new RegistrationCache;
  return *cache;
}

void RegistrationCache::add(void* base, size_t len) {
  std::lock_guard lock(mutex_);
  auto key = reinterpret_cast<uintptr_t>(base);
  if (auto it = ranges_.find(key); it != ranges_.end() && it->second.len == len) return;
  ucp_mem_h memh = nullptr;
  if (ucs_status_t s = map(base, len, &memh); s != UCS_OK)
    throw TransportError(std::string("UCX registration of page-locked memory: ") + ucs_status_string(s));
  ++counts_.made;
  if (auto it = ranges_.find(key); it != ranges_.end()) {
    ucp_mem_unmap(context(), it->second.memh);
    ++counts_.released;
  }
  ranges_[key] = Range{len, memh};
}

void RegistrationCache::release(void* base) {
  std::lock_guard lock(mutex_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(base));
  if (it == ranges_.end()) return;
  ucp_mem_unmap(context(), it->second.memh);
  ++counts_.released;
  ranges_.erase(it);
}

ucp_mem_h RegistrationCache::find(const void* p, size_t len) {
  std::lock_guard lock(mutex_);
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = ranges_.upper_bound(addr);
  if (it == ranges_.begin()) return nullptr;
  --it;
  if (addr - it->first > it->second.len || len > it->second.len - (addr - it->first)) return nullptr;
  ++counts_.reused;
  return it->second.memh;
}

ucp_mem_h RegistrationCache::map_once(const void* p, size_t len) {
  ucp_mem_h memh = nullptr;
  if (map(p, len, &memh) != UCS_OK) return nullptr;
  std::lock_guard lock(mutex_);
  ++counts_.made;
  return memh;
}

void RegistrationCache::unmap_once(ucp_mem_h memh) {
  ucp_mem_unmap(context(), memh);
  std::lock_guard lock(mutex_);
  ++counts_.released;
}

RegistrationCounts RegistrationCache::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace rgpu::transport::ucx
