// Every exported API function runs its body through api(): no exception
// crosses into the application, and the thread's last error is kept the way
// cudaGetLastError reports it.
#pragma once
#include <cuda_runtime_api.h>

#include <new>

#include "client/core/move_gate.hpp"

namespace rgpu::client {

cudaError_t record_error(cudaError_t e);
// Returns the last error and resets it, as cudaGetLastError does.
cudaError_t take_last_error();
cudaError_t peek_last_error();

// For the driver API, whose calls run runtime paths but must leave the
// runtime's last error (cudaGetLastError) as it was.
class KeepLastError {
 public:
  KeepLastError() : saved_(peek_last_error()) {}
  ~KeepLastError();
  KeepLastError(const KeepLastError&) = delete;
  KeepLastError& operator=(const KeepLastError&) = delete;

 private:
  cudaError_t saved_;
};

template <typename F>
cudaError_t api(F&& body) noexcept {
  try {
    CallBoundary boundary;
    return record_error(body());
  } catch (const std::bad_alloc&) {
    return record_error(cudaErrorMemoryAllocation);
  } catch (...) {
    return record_error(cudaErrorUnknown);
  }
}

}  // namespace rgpu::client
