#include "client/core/shareable_handle.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstring>


namespace rgpu::client {

cudaError_t check_shareable_type(const Call& call, int type, const char* api) {
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) return cudaSuccess;
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return cudaErrorInvalidValue;
  return call.descriptors_travel(api);
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
  return call.run_with_fd(static_cast<int>(reinterpret_cast<intptr_t>(in)));
}

}  // namespace rgpu::client
