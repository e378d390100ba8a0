#include "client/core/api_guard.hpp"

#include <dlfcn.h>

#include "common/log.hpp"

namespace rgpu::client {
namespace {
thread_local cudaError_t t_last_error = cudaSuccess;
}

// Not inlined, so that its return address lies in the API function that
// failed: at debug level every failure is logged with that function's name
// (a library's status such as cuDNN's "CUDART" failures names no call).
__attribute__((noinline)) cudaError_t record_error(cudaError_t e) {
  if (e == cudaSuccess) return e;
  t_last_error = e;
  if (log::level() >= log::Level::debug) {
    Dl_info info{};
    dladdr(__builtin_return_address(0), &info);
    RGPU_LOG(debug, "%s returned error %d", info.dli_sname ? info.dli_sname : "an API function", static_cast<int>(e));
  }
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
