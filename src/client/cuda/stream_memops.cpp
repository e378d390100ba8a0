// Stream memory operations: waits on and writes of 32- and 64-bit values in
// device memory, in stream order. Each call is one batch posted to the
// stream's server (no round trip, as launches); addresses must be device
// memory of the stream's device, which the server checks again against the
// session's own.
#include "client/cuda/cuda_api.hpp"

#include <span>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/stream_memops.hpp"
#include "protocol/graph_node.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace rgpu::client {

cudaError_t put_mem_op(const CUstreamBatchMemOpParams& p, int device, proto::Writer& w) {
  int n = proto::mem_op_width(proto::enum_number(p.operation));  // the application's number (wire_enum.hpp)
  if (n < 0) return cudaErrorInvalidValue;
  proto::MemOpWire op = proto::from_cu_mem_op(p);
  if (n) {
    auto range = MemoryMap::get().find_device(op.address, n);
    if (op.address % n || !range || range->device != device) return cudaErrorInvalidValue;
  }
  w.put(op);
  return cudaSuccess;
}

cudaError_t post_mem_ops(cudaStream_t stream, std::span<const CUstreamBatchMemOpParams> ops, unsigned flags) {
  Call call(proto::kOpStreamMemOps);
  uint64_t s;
  if (cudaError_t e = call.to_stream(stream, &s)) return e;
  call.args().put<uint64_t>(s).put<uint32_t>(flags).put<uint32_t>(static_cast<uint32_t>(ops.size()));
  for (const auto& p : ops)
    if (cudaError_t e = put_mem_op(p, call.device_index(), call.args())) return e;
  return call.post();
}

}  // namespace rgpu::client

namespace {

CUresult post(CUstream stream, std::span<const CUstreamBatchMemOpParams> ops, unsigned flags) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (ops.empty()) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(api([&] { return post_mem_ops(reinterpret_cast<cudaStream_t>(stream), ops, flags); }));
}

CUresult one(CUstream stream, CUstreamBatchMemOpType type, CUdeviceptr addr, uint64_t value, unsigned flags) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = type;
  p.writeValue.address = addr;
  p.writeValue.value64 = value;
  p.writeValue.flags = flags;
  return post(stream, {&p, 1}, 0);
}

}  // namespace

extern "C" CUresult CUDAAPI cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                                   unsigned int flags) {
  return one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_32, addr, value, flags);
}

extern "C" CUresult CUDAAPI cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                                   unsigned int flags) {
  return one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_64, addr, value, flags);
}

extern "C" CUresult CUDAAPI cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                                    unsigned int flags) {
  return one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_32, addr, value, flags);
}

extern "C" CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                                    unsigned int flags) {
  return one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_64, addr, value, flags);
}

extern "C" CUresult CUDAAPI cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                                                  CUstreamBatchMemOpParams* paramArray, unsigned int flags) {
  if (count && !paramArray) return CUDA_ERROR_INVALID_VALUE;
  return post(stream, {paramArray, count}, flags);
}
