#include "client/core/external_handles.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "client/core/call.hpp"
#include "client/core/session.hpp"
#include "common/log.hpp"

namespace rgpu::client {

HandleRegistry<cudaExternalMemory_t>& external_memories() {
  static auto* r = new HandleRegistry<cudaExternalMemory_t>;
  return *r;
}

HandleRegistry<cudaExternalSemaphore_t>& external_semaphores() {
  static auto* r = new HandleRegistry<cudaExternalSemaphore_t>;
  return *r;
}

cudaError_t import_with_fd(Call& call, int fd, const char* what) {
  // A descriptor that is not open would break the connection it travels on.
  if (fd < 0 || fcntl(fd, F_GETFD) == -1) return cudaErrorInvalidValue;
  if (!call.device()->session->shares_memory()) {
    RGPU_LOG(warn, "%s: not supported over %s: a file descriptor reaches the server only over shm (the client on "
                   "the GPU's host)", what, call.device()->session->transport_name().c_str());
    return cudaErrorNotSupported;
  }
  cudaError_t e = call.run_with_fd(fd);
  if (e == cudaSuccess) close(fd);
  return e;
}

}  // namespace rgpu::client
