// External semaphore operations as they cross the wire, in the stream calls
// (cudaSignalExternalSemaphoresAsync, cudaWaitExternalSemaphoresAsync) and
// in graph nodes alike: the server's semaphore handle and the parameters by
// value (fence value, keyed-mutex key and timeout), nothing pointing into the
// application.
#pragma once
#include <cstdint>
#include <vector>

#include "protocol/codec.hpp"

namespace rgpu::proto {

struct ExternalSemaphoreOp {
  uint64_t semaphore = 0;  // the server's handle
  uint64_t value = 0;      // fence value to signal or wait for
  uint64_t key = 0;        // keyed mutex key
  uint32_t timeout_ms = 0; // keyed mutex wait
  uint32_t flags = 0;
};

// More than any real batch; a larger count is malformed.
constexpr uint32_t kMaxExternalSemaphoreOps = 4096;

inline void put_semaphore_ops(Writer& w, const std::vector<ExternalSemaphoreOp>& ops) {
  w.put<uint32_t>(static_cast<uint32_t>(ops.size()));
  for (const auto& op : ops) w.put(op);
}

inline std::vector<ExternalSemaphoreOp> get_semaphore_ops(Reader& r) {
  auto n = r.get<uint32_t>();
  if (n > kMaxExternalSemaphoreOps) throw DecodeError("too many external semaphore operations");
  std::vector<ExternalSemaphoreOp> ops(n);
  for (auto& op : ops) op = r.get<ExternalSemaphoreOp>();
  return ops;
}

}  // namespace rgpu::proto
