// Registrations of memory whose lifetime the process knows: the client's
// page-locked buffers (cudaMallocHost, cudaHostAlloc, cuMemHostAlloc,
// cudaHostRegister), registered with UCX once when the application makes
// them and released when it frees or unregisters them. UCX's own
// registration cache is off in the client (UCX_MEM_EVENTS=no, see
// docs/ucx.md), so without this every large copy from or to such a buffer
// would register (pin) it anew. Shared by all of the process's connections.
#pragma once
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "transport/transport.hpp"

namespace rgpu::transport::ucx {

// made: ucp_mem_map calls (cached ranges and single copies); released:
// ucp_mem_unmap calls.
using RegistrationCounts = Transport::RegistrationCounts;

class RegistrationCache {
 public:
  static RegistrationCache& get();

  // Registers [base, base + len) until release(base); again the same range
  // does nothing. Throws TransportError when UCX refuses it.
  void add(void* base, size_t len);
  void release(void* base);
  // The cached registration holding [p, p + len), or null; counts a reuse.
  ucp_mem_h find(const void* p, size_t len);

  // For memory outside the cache: one registration, counted.
  ucp_mem_h map_once(const void* p, size_t len);  // null when UCX refuses
  void unmap_once(ucp_mem_h memh);

  RegistrationCounts counts() const;

 private:
  struct Range {
    size_t len;
    ucp_mem_h memh;
  };
  mutable std::mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  // by base
  RegistrationCounts counts_;
};

}  // namespace rgpu::transport::ucx
