// Zero-copy bulk copies: a connection that reaches the backend's device
// memory (ucx: host-test's host memory always, GPU memory where UCX has its
// CUDA support) moves a contiguous copy's bytes straight between the wire
// and device memory, skipping the staging buffers (GPUDirect RDMA where the
// fabric has it). Off unless RGPU_UCX_ZERO_COPY=1 is in the server's
// environment: on the H200 machine (UCX 1.22 over tcp and cuda_copy, no
// RDMA) UCX found no protocol to read into GPU memory from host memory and
// the sessions failed; it is for fabrics whose NICs reach GPU memory.
#pragma once
#include "server/backend/backend.hpp"
#include "transport/transport.hpp"

namespace rgpu::server {

// RGPU_UCX_ZERO_COPY's value (null: unset): on only for "1".
bool zero_copy_enabled(const char* setting);

// Whether a copy of `stream` may move in place over `c`: enabled, the
// connection reaches device memory of this backend's kind, and the stream
// can be waited for first (not capturing: a capture takes copies into its
// graph, where bytes already landed could not go).
bool zero_copy_applies(bool enabled, const transport::Connection& c, Backend& backend, Handle stream);

}  // namespace rgpu::server
