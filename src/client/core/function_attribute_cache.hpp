// What the server answered about a kernel as loaded on a device, kept so
// that asking again costs no round trip: its attributes (cudaFuncAttributes,
// which cuFuncGetAttribute reads one at a time) and its occupancy for a
// block size, dynamic shared memory and flags. NVIDIA's libraries ask both
// before many launches.
//
// An answer changes only when the kernel's settable attributes or cache
// preferences change, or the device's cache preferences, or the device is
// reset: the calls that do so forget the kernel's (or the device's) answers
// when they return, whatever their outcome. An answer asked for before such
// a forget and returned after it is not kept. Errors are never kept.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rgpu::client {

struct OccupancyQuery {
  int32_t block_size;
  uint64_t dynamic_shared;
  uint32_t flags;
  bool operator==(const OccupancyQuery&) const = default;
};

class FunctionAttributeCache {
 public:
  static FunctionAttributeCache& get();

  // The kernel's attributes on `device` (`function`: its server handle
  // there), asking `fetch(cudaFuncAttributes*)` only when none are kept.
  template <typename Fetch>
  cudaError_t attributes(int device, uint64_t function, cudaFuncAttributes* out, Fetch&& fetch) {
    return answer(
        {device, function}, out,
        [](const Entry& e) { return e.attributes ? &*e.attributes : nullptr; }, std::forward<Fetch>(fetch),
        [](Entry& e, const cudaFuncAttributes& a) { e.attributes = a; });
  }
  // Resident blocks per multiprocessor, as `attributes`.
  template <typename Fetch>
  cudaError_t occupancy(int device, uint64_t function, const OccupancyQuery& q, int* out, Fetch&& fetch) {
    return answer(
        {device, function}, out,
        [&](const Entry& e) -> const int* {
          for (const auto& [query, blocks] : e.occupancy)
            if (query == q) return &blocks;
          return nullptr;
        },
        std::forward<Fetch>(fetch), [&](Entry& e, int blocks) { keep_occupancy(e, q, blocks); });
  }

  // The kernel's attributes or cache preference changed (or may have).
  void forget_function(int device, uint64_t function);
  // The device's cache preferences changed, or it was reset.
  void forget_device(int device);

  // Most occupancy answers kept per kernel: an application that sizes its
  // dynamic shared memory by block size asks many; past this the oldest go.
  static constexpr size_t kOccupancyAnswersPerFunction = 64;

 private:
  struct Key {
    int device;
    uint64_t function;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.function) ^ k.device; }
  };
  struct Entry {
    std::optional<cudaFuncAttributes> attributes;
    std::vector<std::pair<OccupancyQuery, int>> occupancy;  // oldest first
  };

  // The kept answer `find` sees, or the fetched one, handed to `keep`
  // unless a forget came meanwhile.
  template <typename Value, typename Find, typename Fetch, typename Keep>
  cudaError_t answer(const Key& key, Value* out, Find&& find, Fetch&& fetch, Keep&& keep) {
    uint64_t generation;
    {
      std::shared_lock lock(mutex_);
      if (auto it = entries_.find(key); it != entries_.end())
        if (const Value* kept = find(it->second)) {
          *out = *kept;
          return cudaSuccess;
        }
      generation = generation_;
    }
    if (cudaError_t e = fetch(out)) return e;
    std::unique_lock lock(mutex_);
    if (generation == generation_) keep(entries_[key], *out);
    return cudaSuccess;
  }
  static void keep_occupancy(Entry& entry, const OccupancyQuery& q, int blocks);

  std::shared_mutex mutex_;
  // Counts forgets: a fetch that saw another count may predate one.
  uint64_t generation_ = 0;
  std::unordered_map<Key, Entry, KeyHash> entries_;
};

}  // namespace rgpu::client
