// What one session's allocations count against: its own limit
// (max-session-memory) and its job's amount per GPU (job_ledger.hpp).
// Every allocating handler asks here first, so all paths count alike:
// linear, pitched and stream-ordered memory, virtual memory, arrays, graph
// allocations, managed memory. Past either the call fails with
// out-of-memory, as the GPU itself would.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "server/pool/count_limit.hpp"
#include "server/pool/job_ledger.hpp"
#include "server/pool/memory_limit.hpp"

namespace rgpu::server {

// What an allocation really takes of a GPU, as measured on an H200 (driver
// 580, bench/results/2026-11-28-h200-alloc-granularity.txt): allocations of
// up to 1 MiB in blocks of 512 bytes, larger ones in 2 MiB pages. So a
// million 1-byte allocations hold 512 MB, not 1 MB: each counts rounded up.
constexpr uint64_t kDeviceAllocationGranularity = 512;
constexpr uint64_t kLargeAllocationThreshold = 1ull << 20;
constexpr uint64_t kLargeAllocationGranularity = 2ull << 20;

class SessionQuota {
 public:
  // What an allocation is named by until it is freed.
  // fixed_run: a page run of memory made at the client's addresses
  // (server/worker/fixed_address_memory.hpp), named by its base.
  enum class Kind : uint8_t { memory, vmm, array, mipmap, fixed_run };

  // The ledger and the worker the session is registered as; no ledger (a
  // worker outside a daemon): no job's amount counts.
  SessionQuota(JobLedger* ledger, pid_t worker) : ledger_(ledger), worker_(worker) {}

  // The most bytes the session may hold on all its GPUs together
  // (max-session-memory; 0: no limit). Set before the first allocation.
  void set_limit(uint64_t bytes) { limit_.set_limit(bytes); }
  // The most allocations the session may hold at once
  // (max-session-allocations; 0: no limit). Set before the first allocation.
  void set_count_limit(uint64_t n) { count_.set_limit(n); }
  // Counts `bytes` (rounded up as the GPU takes them, above) on `gpu`,
  // then runs `allocate`; when it succeeds the charge stays with what *name
  // then holds, else it is returned. Past the session's limit, its count of
  // allocations or the job's amount nothing runs and the answer is
  // cudaErrorMemoryAllocation (CUDA_ERROR_OUT_OF_MEMORY: the same number).
  int32_t allocate(int gpu, uint64_t bytes, Kind kind, const uint64_t* name, const std::function<int32_t()>& allocate);
  // The allocation named so was freed: its charge returns.
  void freed(Kind kind, uint64_t name);
  // A device reset destroyed everything on `gpu`: its charges return.
  void reset(int gpu);
  // What the session may take on `gpu`, as cudaMemGetInfo tells it: the
  // job's amount (when it has one there) and the session's limit bound the
  // GPU's total, what is left of them its free memory. Programs that size
  // their memory by it (TensorFlow takes most of what is free) then fit.
  void view(int gpu, size_t* free, size_t* total);

 private:
  struct Charge {
    int gpu;
    uint64_t bytes;
  };
  // An allocation's bytes back to the limit and the job's amount.
  void give_back(int gpu, uint64_t bytes);

  JobLedger* ledger_;
  pid_t worker_;
  MemoryLimit limit_{"max-session-memory"};  // charged and being allocated, all GPUs
  CountLimit count_{"allocations", "max-session-allocations"};
  std::mutex mutex_;
  std::map<std::pair<Kind, uint64_t>, Charge> charges_;
};

}  // namespace rgpu::server
