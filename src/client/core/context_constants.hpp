// Answers that never change for a context (cuCtxGetId), kept per device and
// context (the call's frame-header device: the server's ordinal and the
// green context's slot) once the server gave them. A device reset ends its
// primary context, and a destroyed green context's slot may be taken by
// another: both forget the device's answers (kept_answers.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <type_traits>

#include "client/core/call.hpp"
#include "client/core/kept_answers.hpp"

namespace rgpu::client {

class ContextConstants {
 public:
  static ContextConstants& get();

  // The kept answer to `call` (routed, not yet run), or the one `fetch()`
  // stores in *out, kept unless the device's were forgotten meanwhile.
  template <typename T, typename Fetch>
  cudaError_t answer(const Call& call, T* out, Fetch&& fetch) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(uint64_t));
    return kept_.answer(
        Key{call.device_index(), call.wire_device(), call.op()}, out,
        [](uint64_t kept, T* value) {
          std::memcpy(value, &kept, sizeof(T));
          return true;
        },
        [&](T*) { return fetch(); }, [](uint64_t& kept, const T& value) { std::memcpy(&kept, &value, sizeof(T)); });
  }

  void forget_device(int device);

 private:
  using Key = std::tuple<int, uint16_t, uint16_t>;  // device, frame-header device, op
  KeptAnswers<std::map<Key, uint64_t>> kept_;
};

}  // namespace rgpu::client
