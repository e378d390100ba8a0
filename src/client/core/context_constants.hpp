// Answers that never change for a context (cuCtxGetId), kept per device and
// context (the call's frame-header device: the server's ordinal and the
// green context's slot) once the server gave them. A device reset ends its
// primary context, and a destroyed green context's slot may be taken by
// another: both forget the device's answers. Errors are never kept.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "client/core/call.hpp"

namespace rgpu::client {

class ContextConstants {
 public:
  static ContextConstants& get();

  // The kept answer to `call` (routed, not yet run), or the one `fetch()`
  // stores in *out, kept unless the device's were forgotten meanwhile.
  template <typename T, typename Fetch>
  cudaError_t answer(const Call& call, T* out, Fetch&& fetch) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t));
    const Key key{call.device_index(), call.wire_device(), call.op()};
    uint64_t generation;
    {
      std::lock_guard lock(mutex_);
      if (auto it = values_.find(key); it != values_.end()) {
        std::memcpy(out, &it->second, sizeof(T));
        return cudaSuccess;
      }
      generation = generation_;
    }
    if (cudaError_t e = fetch()) return e;
    uint64_t value = 0;
    std::memcpy(&value, out, sizeof(T));
    std::lock_guard lock(mutex_);
    if (generation == generation_) values_[key] = value;
    return cudaSuccess;
  }

  void forget_device(int device);

 private:
  using Key = std::tuple<int, uint16_t, uint16_t>;  // device, frame-header device, op
  std::mutex mutex_;
  uint64_t generation_ = 0;  // counts forgets: a fetch that saw another may predate one
  std::map<Key, uint64_t> values_;
};

}  // namespace rgpu::client
