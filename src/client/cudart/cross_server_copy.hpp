// A copy between device memory of two servers: no GPU reaches the other
// server's memory, so the data crosses the application's memory.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rgpu::client {

// Synchronous: returns once dst holds the data. Work queued before on
// either device's legacy default stream comes first; the caller waits for
// any other stream that orders the copy.
cudaError_t copy_across_servers(void* dst, const void* src, size_t n);

}  // namespace rgpu::client
