// The process's UCP context: created once, on first use, with what every
// rgpu connection needs (tagged messages, remote reads, sleeping waits).
// UCX reads its usual settings from the environment (UCX_TLS,
// UCX_NET_DEVICES...).
#pragma once
#include <ucp/api/ucp.h>

namespace rgpu::transport::ucx {

ucp_context_h context();

}  // namespace rgpu::transport::ucx
