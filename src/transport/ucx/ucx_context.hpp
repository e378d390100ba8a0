// The process's UCP context: created once, on first use, with what every
// rgpu connection needs (tagged messages, remote reads, sleeping waits).
// UCX reads its usual settings from the environment (UCX_TLS,
// UCX_NET_DEVICES...).
#pragma once
#include <ucp/api/ucp.h>

namespace rgpu::transport::ucx {

ucp_context_h context();

// Whether UCX reaches CUDA memory in this process (its CUDA modules loaded:
// cuda_copy, cuda_ipc, or an RDMA device with GPUDirect), as the context
// reports the memory types of its memory domains.
bool reaches_gpu_memory();

}  // namespace rgpu::transport::ucx
