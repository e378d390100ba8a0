#include "client/core/function_attribute_cache.hpp"

#include <algorithm>

namespace rgpu::client {

FunctionAttributeCache& FunctionAttributeCache::get() {
  // Never destroyed: threads may still ask while the process exits.
  static auto* cache = new FunctionAttributeCache;
  return *cache;
}

void FunctionAttributeCache::forget_function(int device, uint64_t function) { kept_.forget({device, function}); }

void FunctionAttributeCache::forget_device(int device) {
  kept_.forget_if([&](const Key& k) { return k.device == device; });
}

void FunctionAttributeCache::keep_occupancy(Entry& entry, const OccupancyQuery& q, int blocks) {
  auto& kept = entry.occupancy;
  // Another thread may have kept the same answer since this one looked.
  if (std::any_of(kept.begin(), kept.end(), [&](const auto& a) { return a.first == q; })) return;
  if (kept.size() == kOccupancyAnswersPerFunction) kept.erase(kept.begin());
  kept.emplace_back(q, blocks);
}

}  // namespace rgpu::client
