// shm: pageable copies go through a ring of page-locked slots shared with
// the server, so the client fills (or drains) one slot while the GPU DMAs
// another, instead of streaming the bytes through the socket.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rgpu::client {

// True when `device` is reached over shm and a copy of n bytes is worth it.
bool staging_ring_suits(int device, size_t n);
cudaError_t ring_copy_to_device(int device, void* dst, const void* src, size_t n, cudaStream_t stream,
                                bool async);
cudaError_t ring_copy_to_host(int device, void* dst, const void* src, size_t n, cudaStream_t stream);

}  // namespace rgpu::client
