// Why a session move does not happen: its steps before the commit throw
// it, and move_session leaves the session where it was, working.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace rgpu::client {

struct MoveRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Refuses with "what: the error's name" unless `e` is cudaSuccess.
inline void check_step(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw MoveRefusal(what + ": " + cudaGetErrorName(e));
}

}  // namespace rgpu::client
