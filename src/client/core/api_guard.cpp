#include "client/core/api_guard.hpp"

namespace rgpu::client {
namespace {
thread_local cudaError_t t_last_error = cudaSuccess;
}

cudaError_t record_error(cudaError_t e) {
  if (e != cudaSuccess) t_last_error = e;
  return e;
}

cudaError_t take_last_error() {
  cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

cudaError_t peek_last_error() { return t_last_error; }

KeepLastError::~KeepLastError() { t_last_error = saved_; }

}  // namespace rgpu::client
