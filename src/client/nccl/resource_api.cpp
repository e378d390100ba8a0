// What NCCL calls make besides communicators and collectives: memory for
// NCCL buffers (device memory of the current device, as cudaMalloc gives),
// buffer registrations and custom reduction ops, both kept by the worker.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "client/nccl/aliases.hpp"
#include "client/nccl/bridge.hpp"
#include "client/nccl/communicators.hpp"
#include "client/nccl/errors.hpp"
#include "protocol/nccl_wire.hpp"
#include "protocol/ops.hpp"

namespace rgpu::nccl {
namespace {

// rgpu's runtime function `name`, from the library file libcuda.so.1 also
// names (bridge() has found it rgpu's).
template <typename F>
F runtime_function(const char* name) {
  if (!bridge()) return nullptr;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return cuda ? reinterpret_cast<F>(dlsym(cuda, name)) : nullptr;
}

ncclComm_t live(ncclComm_t comm) {
  ncclComm_t c = find_comm(comm);
  if (!c || c->remote == 0) fail(ncclInvalidArgument, "%p is not a communicator", static_cast<void*>(comm));
  return c && c->remote ? c : nullptr;
}

}  // namespace
}  // namespace rgpu::nccl

using namespace rgpu;
using namespace rgpu::nccl;

extern "C" {

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (!ptr) return fail(ncclInvalidArgument, "null pointer");
  static auto malloc_fn = runtime_function<cudaError_t (*)(void**, size_t)>("cudaMalloc");
  if (!malloc_fn) return fail(ncclSystemError, "no rgpu runtime in this process");
  cudaError_t e = malloc_fn(ptr, size);
  return e == cudaSuccess ? ncclSuccess : fail(ncclUnhandledCudaError, "cudaMalloc of %zu bytes: error %d", size, e);
}

ncclResult_t ncclMemFree(void* ptr) {
  static auto free_fn = runtime_function<cudaError_t (*)(void*)>("cudaFree");
  if (!free_fn) return fail(ncclSystemError, "no rgpu runtime in this process");
  cudaError_t e = free_fn(ptr);
  return e == cudaSuccess ? ncclSuccess : fail(ncclUnhandledCudaError, "cudaFree: error %d", e);
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  ncclComm_t c = live(comm);
  if (!c) return ncclInvalidArgument;
  if (!handle) return fail(ncclInvalidArgument, "null handle pointer");
  proto::Writer args;
  args.put<uint64_t>(c->remote).put<uint64_t>(reinterpret_cast<uint64_t>(buff)).put<uint64_t>(size);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclCommRegister, c->device, args, &buffer, &reply);
  *handle = r == ncclSuccess ? reinterpret_cast<void*>(reply.get<uint64_t>()) : nullptr;
  return r;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  ncclComm_t c = live(comm);
  if (!c) return ncclInvalidArgument;
  proto::Writer args;
  args.put<uint64_t>(c->remote).put<uint64_t>(reinterpret_cast<uint64_t>(handle));
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  return remote_call(proto::kOpNcclCommDeregister, c->device, args, &buffer, &reply);
}

// A host scalar travels as its value (8 bytes at most), a device one as its address.
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  ncclComm_t c = live(comm);
  if (!c) return ncclInvalidArgument;
  if (!op || !scalar) return fail(ncclInvalidArgument, "null op or scalar");
  if (type < 0 || type >= static_cast<int>(std::size(proto::kNcclTypeSizes)))
    return fail(ncclInvalidArgument, "datatype %d", type);
  uint64_t value = reinterpret_cast<uint64_t>(scalar);
  if (residence == ncclScalarHostImmediate) {
    value = 0;
    std::memcpy(&value, scalar, proto::kNcclTypeSizes[type]);
  }
  proto::Writer args;
  args.put<uint64_t>(c->remote).put<int32_t>(type).put<int32_t>(residence).put<uint64_t>(value);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclRedOpCreatePreMulSum, c->device, args, &buffer, &reply);
  if (r == ncclSuccess) *op = static_cast<ncclRedOp_t>(reply.get<int32_t>());
  return r;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  ncclComm_t c = live(comm);
  if (!c) return ncclInvalidArgument;
  proto::Writer args;
  args.put<uint64_t>(c->remote).put<int32_t>(op);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  return remote_call(proto::kOpNcclRedOpDestroy, c->device, args, &buffer, &reply);
}

}  // extern "C"

RGPU_NCCL_ALIAS(ncclMemAlloc)
RGPU_NCCL_ALIAS(ncclMemFree)
RGPU_NCCL_ALIAS(ncclCommRegister)
RGPU_NCCL_ALIAS(ncclCommDeregister)
RGPU_NCCL_ALIAS(ncclRedOpCreatePreMulSum)
RGPU_NCCL_ALIAS(ncclRedOpDestroy)
