#include "client/core/shareable_handle.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstring>

#include "client/core/descriptor_stand_in.hpp"
#include "common/log.hpp"

namespace rgpu::client {

cudaError_t check_shareable_type(int type) {
  return type == CU_MEM_HANDLE_TYPE_FABRIC || type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ? cudaSuccess
                                                                                                : cudaErrorInvalidValue;
}

cudaError_t run_export(Call& call, int type, void* out) {
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    if (cudaError_t e = call.run()) return e;
    auto fabric = call.reply().get<CUmemFabricHandle>();
    std::memcpy(out, &fabric, sizeof fabric);
    return cudaSuccess;
  }
  int fd = -1;
  if (call.device()->session->shares_memory()) {
    if (cudaError_t e = call.run_taking_fd(&fd)) return e;
  } else {
    if (cudaError_t e = call.run()) return e;
    if ((fd = make_stand_in(call.reply().get<proto::DescriptorToken>())) < 0) {
      RGPU_LOG(warn, "cannot make a descriptor for a shareable handle: %s", strerror(errno));
      return cudaErrorMemoryAllocation;
    }
  }
  *static_cast<int*>(out) = fd;
  return cudaSuccess;
}

cudaError_t run_import(Call& call, int type, void* in, const char* api) {
  call.args().put<int32_t>(type);
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    if (!in) return cudaErrorInvalidValue;
    CUmemFabricHandle fabric;
    std::memcpy(&fabric, in, sizeof fabric);
    call.args().put(fabric);
    return call.run();
  }
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(in));
  proto::DescriptorToken token;
  if (read_stand_in(fd, &token)) {
    call.args().put(proto::DescriptorCarrier::token).put(token);
    cudaError_t e = call.run();
    if (e == cudaErrorInvalidValue)
      RGPU_LOG(warn,
               "%s: the server refused this handle (its log says why): its exporter released it or ended, it is "
               "of another server, or it was altered",
               api);
    return e;
  }
  if (!descriptor_open(fd)) return cudaErrorInvalidValue;
  if (!call.device()->session->shares_memory()) {
    RGPU_LOG(warn, "%s: descriptor %d is not a handle an rgpu export made, and over %s no other can reach the server",
             api, fd, call.device()->session->transport_name().c_str());
    return cudaErrorInvalidValue;
  }
  call.args().put(proto::DescriptorCarrier::attached);
  return call.run_with_fd(fd);
}

}  // namespace rgpu::client
