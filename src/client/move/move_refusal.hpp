// Why a session move does not happen: its steps before the commit throw
// it, and move_session leaves the session where it was, working.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "protocol/codec.hpp"

namespace rgpu::client {

struct MoveRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Refuses with "what: the error's name" unless `e` is cudaSuccess.
inline void check_step(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw MoveRefusal(what + ": " + cudaGetErrorName(e));
}

// A worker's reasons a session cannot move, as its move replies begin
// (count, then each): refused with them all, when there is any.
inline void refuse_for_reasons(proto::Reader& r) {
  std::string why;
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) why += (why.empty() ? "" : "; ") + r.get_string();
  if (!why.empty()) throw MoveRefusal(why);
}

}  // namespace rgpu::client
