// Answers from the server kept by key so that asking again costs no round
// trip (FunctionAttributeCache, ContextConstants). An answer fetched while a
// forget ran may predate it: it is returned but not kept (a count of forgets
// tells). Errors are never kept.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <shared_mutex>

namespace rgpu::client {

template <typename Map>
class KeptAnswers {
 public:
  using Key = typename Map::key_type;
  using Entry = typename Map::mapped_type;

  // `find(entry, out)` copies a kept answer out of the key's entry (false:
  // none); else `fetch(out)` asks the server and, unless a forget came
  // meanwhile, `keep(entry, *out)` stores what it got.
  template <typename Value, typename Find, typename Fetch, typename Keep>
  cudaError_t answer(const Key& key, Value* out, Find&& find, Fetch&& fetch, Keep&& keep) {
    uint64_t generation;
    {
      std::shared_lock lock(mutex_);
      if (auto it = entries_.find(key); it != entries_.end() && find(it->second, out)) return cudaSuccess;
      generation = generation_;
    }
    if (cudaError_t e = fetch(out)) return e;
    std::unique_lock lock(mutex_);
    if (generation == generation_) keep(entries_[key], *out);
    return cudaSuccess;
  }

  void forget(const Key& key) {
    std::unique_lock lock(mutex_);
    ++generation_;
    entries_.erase(key);
  }
  template <typename Pred>
  void forget_if(Pred&& pred) {
    std::unique_lock lock(mutex_);
    ++generation_;
    std::erase_if(entries_, [&](const auto& e) { return pred(e.first); });
  }

 private:
  std::shared_mutex mutex_;
  uint64_t generation_ = 0;  // forgets so far
  Map entries_;
};

}  // namespace rgpu::client
