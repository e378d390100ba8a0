#include "client/core/shareable_handle.hpp"

#include <cuda.h>
#include <fcntl.h>

#include <cstdint>
#include <cstring>

#include "client/core/session.hpp"
#include "common/log.hpp"

namespace rgpu::client {

cudaError_t check_shareable_type(const Call& call, int type, const char* api) {
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaSuccess;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return cudaErrorInvalidValue;
  if (call.device()->session->shares_memory()) return cudaSuccess;
  RGPU_LOG(warn, "%s: POSIX file descriptor handles need the shm transport (client and server on one host); "
                 "this session uses %s",
           api, call.device()->session->transport_name().c_str());
  return cudaErrorNotSupported;
}

cudaError_t run_export(Call& call, int type, void* out) {
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    if (cudaError_t e = call.run()) return e;
    auto fabric = call.reply().get<CUmemFabricHandle>();
    std::memcpy(out, &fabric, sizeof fabric);
    return cudaSuccess;
  }
  int fd = -1;
  if (cudaError_t e = call.run_taking_fd(&fd)) return e;
  *static_cast<int*>(out) = fd;
  return cudaSuccess;
}

cudaError_t run_import(Call& call, int type, void* in) {
  call.args().put<int32_t>(type);
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    if (!in) return cudaErrorInvalidValue;
    CUmemFabricHandle fabric;
    std::memcpy(&fabric, in, sizeof fabric);
    call.args().put(fabric);
    return call.run();
  }
  // Checked here: a descriptor sendmsg refuses would cost the connection.
  int fd = static_cast<int>(reinterpret_cast<intptr_t>(in));
  if (fd < 0 || fcntl(fd, F_GETFD) < 0) return cudaErrorInvalidValue;
  return call.run_with_fd(fd);
}

}  // namespace rgpu::client
