// cuMemBatchDecompressAsync on the server: every address an operation names
// must be the session's memory, over the whole range it reads or writes.
// The reply carries the driver's result and the index of the operation it
// concerns (SIZE_MAX: the batch as a whole), which the call returns.
#include <cstdint>
#include <vector>

#include "protocol/ops.hpp"
#include "protocol/wire_enum.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

constexpr uint32_t kMaxDecompressions = 1 << 16;

int32_t batch_decompress(SessionContext& s, Request& req, proto::Writer& out) {
  auto stream = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  auto count = req.args.get<uint32_t>();
  if (count == 0 || count > kMaxDecompressions) return cudaErrorInvalidValue;
  std::vector<CUmemDecompressParams> ops(count);
  for (auto& p : ops) {
    p = {};
    p.srcNumBytes = req.args.get<uint64_t>();
    p.dstNumBytes = req.args.get<uint64_t>();
    p.dstActBytes = reinterpret_cast<cuuint32_t*>(req.args.get<uint64_t>());
    p.src = reinterpret_cast<const void*>(req.args.get<uint64_t>());
    p.dst = reinterpret_cast<void*>(req.args.get<uint64_t>());
    // The driver judges the algorithm; no C++ code here reads it.
    proto::set_enum_number(&p.algo, req.args.get<proto::EnumNumber<CUmemDecompressAlgorithm>>());
  }
  req.args.expect_end();
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  for (const auto& p : ops) {
    if (!s.owns(reinterpret_cast<uint64_t>(p.src), p.srcNumBytes ? p.srcNumBytes : 1) ||
        !s.owns(reinterpret_cast<uint64_t>(p.dst), p.dstNumBytes ? p.dstNumBytes : 1) ||
        !s.owns(reinterpret_cast<uint64_t>(p.dstActBytes), sizeof(cuuint32_t)))
      return cudaErrorInvalidValue;
  }
  size_t failed = SIZE_MAX;
  int32_t result = s.backend().mem_batch_decompress(stream, ops, flags, &failed);
  out.put<int32_t>(result).put<uint64_t>(failed);
  return cudaSuccess;
}

}  // namespace

void register_decompression_handlers(Dispatcher& d) { d.add(proto::kOpMemBatchDecompress, batch_decompress); }

}  // namespace rgpu::server
