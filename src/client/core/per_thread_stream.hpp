// The _ptds/_ptsz entry points (programs built with
// --default-stream per-thread) run the plain function inside this scope:
// there, the default stream (0) means the calling thread's own stream.
#pragma once
#include <cuda_runtime_api.h>

namespace rgpu::client {

struct PerThreadStreamScope {
  PerThreadStreamScope();
  ~PerThreadStreamScope();
  PerThreadStreamScope(const PerThreadStreamScope&) = delete;
  PerThreadStreamScope& operator=(const PerThreadStreamScope&) = delete;
};

// The stream a call really uses: 0 becomes cudaStreamPerThread in the scope.
cudaStream_t effective_stream(cudaStream_t s);

}  // namespace rgpu::client
