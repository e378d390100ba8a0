// Client-side external memory and external semaphore objects: the
// application's cudaExternalMemory_t / CUexternalMemory and
// cudaExternalSemaphore_t / CUexternalSemaphore point at records saying
// which device (so which server) imported the object and the server's
// handle. Handles the client never made are refused.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "client/core/handles.hpp"
#include "protocol/external_wire.hpp"

namespace rgpu::client {

HandleRegistry<cudaExternalMemory_t>& external_memories();
HandleRegistry<cudaExternalSemaphore_t>& external_semaphores();

class Call;
// Runs an import routed to its device, handing the server the application's
// file descriptor; the descriptor belongs to CUDA after a successful import,
// so it is closed here then. Over tcp no descriptor can travel:
// cudaErrorNotSupported, with a line in the log saying why. `what` names the API call.
cudaError_t import_with_fd(Call& call, int fd, const char* what);

// Semaphores with their signal or wait parameters as the wire carries them
// (values by value). *device: the device all of them belong to (-1 for
// none); a semaphore the client never made, or of another device, is
// cudaErrorInvalidResourceHandle.
template <typename Params>
cudaError_t to_semaphore_ops(const cudaExternalSemaphore_t* sems, const Params* params, unsigned n, int* device,
                             std::vector<proto::ExternalSemaphoreOp>* ops) {
  if (n > proto::kMaxExternalSemaphoreOps || (n > 0 && (!sems || !params))) return cudaErrorInvalidValue;
  *device = -1;
  ops->clear();
  for (unsigned i = 0; i < n; ++i) {
    RemoteObject o;
    if (!external_semaphores().find(sems[i], &o)) return cudaErrorInvalidResourceHandle;
    if (*device >= 0 && o.device != *device) return cudaErrorInvalidResourceHandle;
    *device = o.device;
    proto::ExternalSemaphoreOp op;
    op.semaphore = o.remote;
    op.value = params[i].params.fence.value;
    op.key = params[i].params.keyedMutex.key;
    if constexpr (requires { params[i].params.keyedMutex.timeoutMs; })
      op.timeout_ms = params[i].params.keyedMutex.timeoutMs;
    op.flags = params[i].flags;
    ops->push_back(op);
  }
  return cudaSuccess;
}

// The reverse, for the graph-node queries: the application's handles back.
template <typename Params>
void from_semaphore_ops(const std::vector<proto::ExternalSemaphoreOp>& ops, int device,
                        std::vector<cudaExternalSemaphore_t>* sems, std::vector<Params>* params) {
  sems->clear();
  params->clear();
  for (const auto& op : ops) {
    sems->push_back(external_semaphores().intern(device, op.semaphore));
    Params p{};
    p.params.fence.value = op.value;
    p.params.keyedMutex.key = op.key;
    if constexpr (requires { p.params.keyedMutex.timeoutMs; }) p.params.keyedMutex.timeoutMs = op.timeout_ms;
    p.flags = op.flags;
    params->push_back(p);
  }
}

}  // namespace rgpu::client
