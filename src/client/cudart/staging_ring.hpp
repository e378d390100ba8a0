// shm: pageable copies go through a ring of page-locked slots shared with
// the server, so the client fills (or drains) one slot while the GPU DMAs
// another, instead of streaming the bytes through the socket.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rgpu::client {

// Each returns false, doing nothing, when the copy is not for a ring (not
// over shm, too small to gain) or every ring of the device is in use; the
// caller then sends the data through its connection. Otherwise *status is
// the copy's result.
bool ring_copy_to_device(int device, void* dst, const void* src, size_t n, cudaStream_t stream, bool async,
                         cudaError_t* status);
bool ring_copy_to_host(int device, void* dst, const void* src, size_t n, cudaStream_t stream,
                       cudaError_t* status);
// The device's session moved to another server: its rings, registered with
// the old one, go; new ones are made for the new one as copies need them.
// No copy may be using one (the move has stopped every call).
void forget_staging_rings(int device);

}  // namespace rgpu::client
