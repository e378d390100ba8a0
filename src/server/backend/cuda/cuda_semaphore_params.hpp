// External semaphore operations from the wire as the CUDA runtime takes
// them (stream calls and graph nodes alike), and back.
#pragma once
#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "protocol/external_wire.hpp"

namespace rgpu::server {

// Params: cudaExternalSemaphoreSignalParams or cudaExternalSemaphoreWaitParams.
template <typename Params>
struct SemaphoreArrays {
  explicit SemaphoreArrays(std::span<const proto::ExternalSemaphoreOp> ops) {
    for (const auto& op : ops) {
      sems.push_back(reinterpret_cast<cudaExternalSemaphore_t>(op.semaphore));
      Params p{};
      p.params.fence.value = op.value;
      p.params.keyedMutex.key = op.key;
      if constexpr (requires { p.params.keyedMutex.timeoutMs; }) p.params.keyedMutex.timeoutMs = op.timeout_ms;
      p.flags = op.flags;
      params.push_back(p);
    }
  }
  unsigned count() const { return static_cast<unsigned>(sems.size()); }
  // NodeParams: cudaExternalSemaphore{Signal,Wait}NodeParams (V2 too).
  template <typename NodeParams>
  NodeParams node() {
    return NodeParams{sems.data(), params.data(), count()};
  }

  std::vector<cudaExternalSemaphore_t> sems;
  std::vector<Params> params;
};

using SignalArrays = SemaphoreArrays<cudaExternalSemaphoreSignalParams>;
using WaitArrays = SemaphoreArrays<cudaExternalSemaphoreWaitParams>;

// A node's semaphores and parameters (the driver's arrays) as operations.
template <typename NodeParams>
std::vector<proto::ExternalSemaphoreOp> semaphore_ops(const NodeParams& n) {
  std::vector<proto::ExternalSemaphoreOp> ops;
  for (unsigned i = 0; i < n.numExtSems; ++i) {
    const auto& p = n.paramsArray[i];
    proto::ExternalSemaphoreOp op;
    op.semaphore = reinterpret_cast<uint64_t>(n.extSemArray[i]);
    op.value = p.params.fence.value;
    op.key = p.params.keyedMutex.key;
    if constexpr (requires { p.params.keyedMutex.timeoutMs; }) op.timeout_ms = p.params.keyedMutex.timeoutMs;
    op.flags = p.flags;
    ops.push_back(op);
  }
  return ops;
}

}  // namespace rgpu::server
