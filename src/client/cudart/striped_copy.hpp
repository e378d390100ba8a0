// Large copies between pageable memory and a device whose session cannot
// share memory (tcp, tls): one TCP stream moves only as much as the one core
// copying (and encrypting) between socket and memory manages, so the copy is
// cut into stripes that helper threads move at once, each on its own
// connection of the session. RGPU_TCP_STRIPES sets how many (default 4;
// 1 turns striping off).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace rgpu::client {

// Stripes a copy should use: RGPU_TCP_STRIPES, bounded by the helper threads.
unsigned tcp_stripes();

// How many stripes a copy of n bytes on `device` moves in: 1 where it is
// not striped (too small, or not a tcp/tls session). Asynchronous copies of
// page-locked memory (background_copies.hpp) are cut the same way.
unsigned stripes_for(int device, size_t n);

// Copies n bytes from src (host) to dst (device) or the other way, on the
// server's stream remote_stream, and sets *status. False when the copy is
// not striped (too small, a shared-memory session, the per-thread default
// stream that only the caller's connection names, helpers busy): the caller
// copies itself. An asynchronous host-to-device copy returns once its data
// is queued on the GPU, as after the driver staged a pageable copy.
bool striped_copy(int device, uint64_t remote_stream, void* dst, const void* src, size_t n, bool to_device,
                  bool sync, cudaError_t* status);

}  // namespace rgpu::client
