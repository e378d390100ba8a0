// Everything the worker knows about the one client session it serves.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/worker/allocation_table.hpp"
#include "server/worker/handle_set.hpp"
#include "server/worker/staging_pool.hpp"

namespace rgpu::server {

// Client memory shared with this worker (shm): where it is mapped here.
struct SharedRegion {
  void* local;
  size_t size;
};

struct FunctionInfo {
  std::vector<KernelParam> params;
  uint32_t args_size = 0;  // bytes of the packed parameter buffer
};

class SessionContext {
 public:
  SessionContext(Backend& backend, std::vector<int> gpus, std::string module_cache_dir)
      : backend_(backend), gpus_(std::move(gpus)), module_cache_dir_(std::move(module_cache_dir)) {}
  ~SessionContext();
  SessionContext(const SessionContext&) = delete;
  SessionContext& operator=(const SessionContext&) = delete;

  Backend& backend() { return backend_; }
  const std::vector<int>& gpus() const { return gpus_; }
  bool has_gpu(int ordinal) const;
  const std::string& module_cache_dir() const { return module_cache_dir_; }

  // Special stream handles (0, cudaStreamLegacy, cudaStreamPerThread) are
  // always valid; others must have been created by this session.
  bool valid_stream(uint64_t h) const { return h <= 2 || streams.contains(h); }
  bool valid_event(uint64_t h) const { return events.contains(h); }
  // True when [ptr, ptr + n) is memory this session may touch: its own
  // allocations or the variables of the modules it loaded.
  bool owns(uint64_t ptr, size_t n) const {
    return allocations.contains(ptr, n) || globals.contains(ptr, n);
  }
  // This worker's address for client shared memory [client_ptr, +n), or
  // null when the range is not inside one registered region.
  void* shared_host(uint64_t client_ptr, size_t n) const;
  std::map<uint64_t, SharedRegion> shared;  // by client base address

  // The staging buffers of the device the current request runs on.
  StagingPool& staging(int device);
  // After a device reset its staging events no longer exist.
  void drop_staging(int device) { staging_.erase(device); }

  AllocationTable allocations;
  AllocationTable globals;
  HandleSet streams;
  HandleSet events;
  HandleSet modules;
  std::unordered_map<uint64_t, FunctionInfo> functions;

  // Set by handlers that sent their reply themselves.
  bool reply_sent = false;
  // The first error of an asynchronous call since the last reply.
  int32_t deferred = 0;

 private:
  Backend& backend_;
  std::vector<int> gpus_;
  std::string module_cache_dir_;
  std::unordered_map<int, std::unique_ptr<StagingPool>> staging_;
};

}  // namespace rgpu::server
