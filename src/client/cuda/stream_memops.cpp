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
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// The bytes an operation touches; 0 for barriers and flushes, -1 unknown.
int width(const CUstreamBatchMemOpParams& p) {
  switch (p.operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: return 8;
    case CU_STREAM_MEM_OP_BARRIER:
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: return 0;
    default: return -1;
  }
}

CUresult post(CUstream stream, std::span<const CUstreamBatchMemOpParams> ops, unsigned flags) {
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (ops.empty()) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpStreamMemOps);
    uint64_t s;
    if (cudaError_t e = call.to_stream(reinterpret_cast<cudaStream_t>(stream), &s)) return e;
    call.args().put<uint64_t>(s).put<uint32_t>(flags).put<uint32_t>(static_cast<uint32_t>(ops.size()));
    for (const auto& p : ops) {
      int n = width(p);
      if (n < 0) return cudaErrorInvalidValue;
      // The wait and write members share their layout.
      uint64_t address = n ? p.writeValue.address : 0;
      uint32_t op_flags = n ? p.writeValue.flags : p.memoryBarrier.flags;
      uint64_t value = n == 4 ? p.writeValue.value : n == 8 ? p.writeValue.value64 : 0;
      if (n) {
        auto range = MemoryMap::get().find_device(address, n);
        if (address % n || !range || range->device != call.device_index()) return cudaErrorInvalidValue;
      }
      call.args().put<uint32_t>(p.operation).put<uint32_t>(op_flags).put<uint64_t>(address).put<uint64_t>(value);
    }
    return call.post();
  }));
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
