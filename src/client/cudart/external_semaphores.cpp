// External semaphores (cudaImportExternalSemaphore & co.). As external
// memory: file-descriptor semaphores (opaque and timeline) over shm only,
// their descriptor travelling with the import; the others are Windows,
// Direct3D or NvSciSync objects that Linux drivers refuse. Signals and waits
// are queued on their stream like a kernel launch, with their values.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/external_handles.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

bool is_fd_type(int type) {
  return type == cudaExternalSemaphoreHandleTypeOpaqueFd || type == cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
}

bool is_known_type(int type) {
  return type >= cudaExternalSemaphoreHandleTypeOpaqueFd && type <= cudaExternalSemaphoreHandleTypeTimelineSemaphoreWin32;
}

// Signals or waits: every semaphore must belong to the stream's device.
template <typename Params>
cudaError_t queue(uint16_t op, const cudaExternalSemaphore_t* sems, const Params* params, unsigned n,
                  cudaStream_t stream) {
  std::vector<proto::ExternalSemaphoreOp> ops;
  int device;
  if (cudaError_t e = to_semaphore_ops(sems, params, n, &device, &ops)) return e;
  Call call(op);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  if (n == 0) return cudaSuccess;
  if (device != call.device_index()) return cudaErrorInvalidResourceHandle;
  call.args().put<uint64_t>(s);
  proto::put_semaphore_ops(call.args(), ops);
  return call.post();
}

}  // namespace

extern "C" cudaError_t cudaImportExternalSemaphore(cudaExternalSemaphore_t* semaphore,
                                                   const cudaExternalSemaphoreHandleDesc* desc) {
  return api([&]() -> cudaError_t {
    if (!semaphore || !desc || !is_known_type(desc->type)) return cudaErrorInvalidValue;
    if (!is_fd_type(desc->type)) {
      RGPU_LOG(warn, "cudaImportExternalSemaphore: handle type %d is a Windows, Direct3D or NvSciSync object, which "
                     "Linux drivers do not import", static_cast<int>(desc->type));
      return cudaErrorNotSupported;
    }
    if (desc->flags != 0) return cudaErrorInvalidValue;
    Call call(proto::kOpExternalSemaphoreImport);
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put<int32_t>(desc->type).put<uint32_t>(desc->flags);
    if (cudaError_t e = import_with_fd(call, desc->handle.fd, "cudaImportExternalSemaphore")) return e;
    *semaphore = external_semaphores().add(call.device_index(), call.reply().get<uint64_t>());
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaSignalExternalSemaphoresAsync(const cudaExternalSemaphore_t* sems,
                                                         const cudaExternalSemaphoreSignalParams* params,
                                                         unsigned int n, cudaStream_t stream) {
  return api([&] { return queue(proto::kOpExternalSemaphoresSignal, sems, params, n, stream); });
}

extern "C" cudaError_t cudaWaitExternalSemaphoresAsync(const cudaExternalSemaphore_t* sems,
                                                       const cudaExternalSemaphoreWaitParams* params, unsigned int n,
                                                       cudaStream_t stream) {
  return api([&] { return queue(proto::kOpExternalSemaphoresWait, sems, params, n, stream); });
}

extern "C" cudaError_t cudaDestroyExternalSemaphore(cudaExternalSemaphore_t semaphore) {
  return api([&]() -> cudaError_t {
    RemoteObject o;
    if (!external_semaphores().find(semaphore, &o)) return cudaErrorInvalidResourceHandle;
    Call call(proto::kOpExternalSemaphoreDestroy);
    int32_t remote;
    if (cudaError_t e = call.to_device(o.device, &remote)) return e;
    call.args().put<uint64_t>(o.remote);
    if (cudaError_t e = call.run()) return e;
    external_semaphores().remove(semaphore);
    return cudaSuccess;
  });
}
