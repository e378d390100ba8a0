#include "client/nccl/bridge.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <cuda_runtime_api.h>

#include <cstring>

#include "client/nccl/errors.hpp"
#include "common/log.hpp"

namespace rgpu::nccl {

const client::FrontEndBridge* bridge() {
  static const client::FrontEndBridge* table = [] () -> const client::FrontEndBridge* {
    // rgpu's libcuda.so.1 (`rgpu run` hands it to the process); NVIDIA's has
    // no such table.
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    auto get = cuda ? reinterpret_cast<CUresult (*)(const void**, const CUuuid*)>(dlsym(cuda, "cuGetExportTable"))
                    : nullptr;
    CUuuid id;
    static_assert(sizeof id.bytes == sizeof client::kFrontEndBridgeUuid);
    std::memcpy(id.bytes, client::kFrontEndBridgeUuid, sizeof id.bytes);
    const void* t = nullptr;
    if (!get || get(&t, &id) != CUDA_SUCCESS || !t ||
        static_cast<const client::FrontEndBridge*>(t)->size < sizeof(client::FrontEndBridge)) {
      RGPU_LOG(error, "rgpu's libnccl.so.2 needs rgpu's libcuda.so.1 in the process (run the application with "
                      "`rgpu run`, or set RGPU_NCCL=native to use NVIDIA's NCCL)");
      return nullptr;
    }
    return static_cast<const client::FrontEndBridge*>(t);
  }();
  return table;
}

namespace {

// The NCCL error for a call the core could not make or the worker refused.
ncclResult_t transport_failure(int e, int device) {
  if (e == cudaErrorInvalidValue) return fail(ncclInvalidArgument, "the worker refused the call as malformed");
  if (e == cudaErrorDevicesUnavailable)
    return fail(ncclSystemError, "the rgpu server of device %d is lost", device);
  return fail(ncclSystemError, "device %d: %s", device, e == cudaErrorInvalidDevice ? "no such device" : "CUDA error");
}

}  // namespace

ncclResult_t remote_call(uint16_t op, int device, const proto::Writer& args, std::vector<uint8_t>* buffer,
                         proto::Reader* reply) {
  const client::FrontEndBridge* b = bridge();
  if (!b) return fail(ncclSystemError, "no rgpu client in this process");
  // The largest reply: a group's communicators (8 bytes each), or a last error's text.
  buffer->resize(size_t{1} << 16);
  size_t len = 0;
  int e = b->call(op, device, args.bytes().data(), args.size(), buffer->data(), buffer->size(), &len);
  if (e == cudaSuccess && len > buffer->size()) {
    fail(ncclInternalError, "a reply of %zu bytes did not fit", len);
    return ncclInternalError;
  }
  if (e != cudaSuccess) return transport_failure(e, device);
  buffer->resize(len);
  *reply = proto::Reader(*buffer);
  try {
    return static_cast<ncclResult_t>(reply->get<int32_t>());
  } catch (const proto::DecodeError&) {
    return fail(ncclInternalError, "an empty reply");
  }
}

ncclResult_t remote_post(uint16_t op, int device, const proto::Writer& args) {
  const client::FrontEndBridge* b = bridge();
  if (!b) return fail(ncclSystemError, "no rgpu client in this process");
  int e = b->post(op, device, args.bytes().data(), args.size());
  return e == cudaSuccess ? ncclSuccess : transport_failure(e, device);
}

}  // namespace rgpu::nccl
