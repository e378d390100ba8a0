#include "client/core/external_handles.hpp"

#include <unistd.h>

#include "client/core/call.hpp"

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
  if (!descriptor_open(fd)) return cudaErrorInvalidValue;
  if (cudaError_t e = call.descriptors_travel(what)) return e;
  cudaError_t e = call.run_with_fd(fd);
  if (e == cudaSuccess) close(fd);
  return e;
}

}  // namespace rgpu::client
