// The device memory behind coherent memory (coherent_memory.hpp). CUDA lets
// every GPU reach page-locked host memory, so memory standing in for it on
// a server of several GPUs is a mapping (cuMemCreate, cuMemMap) of the
// current device that each GPU of that server is granted access to; kernels
// of GPUs of other servers cannot reach it. Elsewhere it is cudaMalloc's.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace rgpu::client::device_backing {

struct Allocation {
  uint64_t address = 0;
  size_t size = 0;      // of a mapping
  bool mapped = false;  // a mapping, else cudaMalloc's
};

// At least `bytes` on the current device; `server_wide`: reachable by every
// GPU of its server (where some lacks peer access to it, by those that have it).
cudaError_t allocate(size_t bytes, bool server_wide, Allocation* out);
cudaError_t release(const Allocation& a);

}  // namespace rgpu::client::device_backing
