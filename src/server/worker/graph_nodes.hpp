// A graph node's parameters between the wire and the backend, shared by the
// graph calls (graph_handlers.cpp) and a move's graphs (graph_move_handlers.cpp).
#pragma once
#include <cstdint>

#include "protocol/graph_node.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {

// What a node may hold: this session's kernels, memory, events, graphs and
// conditional handles; a CUDA error when it holds anything else.
int32_t check_node(SessionContext& s, const GraphNodeParams& p);
// The parameters as the backend takes them (checked first).
GraphNodeParams to_backend(SessionContext& s, GraphNodeParams p);
// A copy node's sides as the client names them.
void from_backend_copy(SessionContext& s, GraphNodeParams* p);
// The launch attributes a kernel node takes: none naming an event or handing
// out a device-side handle; an access policy window on the session's memory.
inline constexpr int32_t kKernelNodeAttributes[] = {
    cudaLaunchAttributeAccessPolicyWindow,
    cudaLaunchAttributeCooperative,
    cudaLaunchAttributeClusterDimension,
    cudaLaunchAttributeClusterSchedulingPolicyPreference,
    cudaLaunchAttributePriority,
    cudaLaunchAttributeMemSyncDomainMap,
    cudaLaunchAttributeMemSyncDomain,
    cudaLaunchAttributePreferredClusterDimension,
    cudaLaunchAttributePreferredSharedMemoryCarveout,
};
bool kernel_node_attribute(int32_t attr);
int32_t check_kernel_node_attribute(SessionContext& s, int32_t attr, const cudaLaunchAttributeValue& value);

}  // namespace rgpu::server
