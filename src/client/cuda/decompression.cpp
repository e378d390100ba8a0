// cuMemBatchDecompressAsync: a batch of hardware decompressions queued on the
// stream's server. Every source, destination and actual-size word must be
// device memory of the stream's device (checked here and again by the
// server against the session's own); the call waits for the server's answer,
// which names the operation an error concerns.
#include "client/cuda/cuda_api.hpp"

#include <cstdint>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

bool on_device(uint64_t p, size_t n, int device) {
  auto range = MemoryMap::get().find_device(p, n ? n : 1);
  return range && range->device == device;
}

}  // namespace

extern "C" CUresult CUDAAPI cuMemBatchDecompressAsync(CUmemDecompressParams* paramsArray, size_t count,
                                                      unsigned int flags, size_t* errorIndex, CUstream stream) {
  size_t ignored;
  size_t& failed = errorIndex ? *errorIndex : ignored;
  failed = SIZE_MAX;
  KeepLastError keep;
  if (CUresult e = driver_ready()) return e;
  if (!paramsArray || count == 0 || count > UINT32_MAX || flags) return CUDA_ERROR_INVALID_VALUE;
  return to_cu(api([&]() -> cudaError_t {
    Call call(proto::kOpMemBatchDecompress);
    uint64_t s;
    if (cudaError_t e = call.to_stream(reinterpret_cast<cudaStream_t>(stream), &s)) return e;
    call.args().put<uint64_t>(s).put<uint32_t>(flags).put<uint32_t>(static_cast<uint32_t>(count));
    for (size_t i = 0; i < count; ++i) {
      const CUmemDecompressParams& p = paramsArray[i];
      auto src = reinterpret_cast<uint64_t>(p.src), dst = reinterpret_cast<uint64_t>(p.dst);
      auto act = reinterpret_cast<uint64_t>(p.dstActBytes);
      int d = call.device_index();
      if (!on_device(src, p.srcNumBytes, d) || !on_device(dst, p.dstNumBytes, d) || !on_device(act, 4, d)) {
        failed = i;
        return cudaErrorInvalidValue;
      }
      call.args().put<uint64_t>(p.srcNumBytes).put<uint64_t>(p.dstNumBytes).put<uint64_t>(act);
      call.args().put<uint64_t>(src).put<uint64_t>(dst).put<int32_t>(p.algo);
    }
    if (cudaError_t e = call.run()) return e;
    // The driver's answer and the index it gave travel as the reply.
    auto result = call.reply().get<int32_t>();
    failed = static_cast<size_t>(call.reply().get<uint64_t>());
    return static_cast<cudaError_t>(result);
  }));
}
