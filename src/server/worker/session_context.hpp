// Everything the worker knows about the one client session it serves,
// shared by the threads serving the session's connections (lane.hpp holds
// what belongs to one connection).
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/pool/server_counters.hpp"
#include "server/pool/session_quota.hpp"
#include "server/worker/allocation_table.hpp"
#include "server/worker/array_table.hpp"
#include "server/worker/device_object_set.hpp"
#include "server/worker/external_memory_table.hpp"
#include "server/worker/fixed_address_memory.hpp"
#include "server/worker/exec_graph_copies.hpp"
#include "server/worker/preloaded_modules.hpp"
#include "server/worker/graph_staging_slabs.hpp"
#include "server/worker/graph_table.hpp"
#include "server/worker/green_context_table.hpp"
#include "server/worker/host_node_records.hpp"
#include "server/worker/handle_set.hpp"
#include "server/worker/async_notifications.hpp"
#include "server/worker/host_callbacks.hpp"
#include "server/pool/memory_limit.hpp"
#include "server/pool/session_bounds.hpp"
#include "server/worker/descriptor_exports.hpp"
#include "server/worker/ipc_records.hpp"
#include "server/worker/nccl_table.hpp"
#include "server/worker/peer_warnings.hpp"
#include "server/worker/vmm_table.hpp"
#include "server/worker/zero_copy.hpp"

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

// Kernels a session loaded, by backend handle. Entries stay put until a
// device reset clears the table, so a found entry can be read unlocked.
class FunctionTable {
 public:
  void put(uint64_t fn, FunctionInfo info) {
    std::lock_guard lock(mutex_);
    functions_[fn] = std::move(info);
  }
  const FunctionInfo* find(uint64_t fn) const {
    std::lock_guard lock(mutex_);
    auto it = functions_.find(fn);
    return it == functions_.end() ? nullptr : &it->second;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    functions_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, FunctionInfo> functions_;
};

class SessionContext {
 public:
  // `ledger`: the pool's, where this worker registered the session.
  SessionContext(Backend& backend, std::vector<int> gpus, std::string module_cache_dir, JobLedger* ledger = nullptr)
      : quota(ledger, getpid()),
        graph_staging(backend, host_memory),
        notifications(backend, host_callbacks),
        backend_(backend),
        gpus_(std::move(gpus)),
        module_cache_dir_(std::move(module_cache_dir)) {}
  ~SessionContext();
  SessionContext(const SessionContext&) = delete;
  SessionContext& operator=(const SessionContext&) = delete;

  Backend& backend() { return backend_; }
  const std::vector<int>& gpus() const { return gpus_; }
  bool has_gpu(int ordinal) const;
  const std::string& module_cache_dir() const { return module_cache_dir_; }

  // Applies the session's bounds (session_bounds.hpp) to its tables; before
  // the first request.
  void bound(const SessionBounds& bounds);
  const SessionBounds& bounds() const { return bounds_; }
  // Whether a module image (or a link's inputs) of `bytes` is within
  // max-module-bytes; a larger one is logged once per session.
  bool fits_module(uint64_t bytes);

  // Special stream handles (0, cudaStreamLegacy, cudaStreamPerThread) are
  // always valid; others must have been created by this session.
  bool valid_stream(uint64_t h) const { return h <= 2 || streams.contains(h); }
  bool valid_event(uint64_t h) const { return events.contains(h); }
  // True when [ptr, ptr + n) is memory this session may touch: its own
  // allocations, the variables of the modules it loaded, or memory mapped
  // for it.
  bool owns(uint64_t ptr, size_t n) const {
    return allocations.contains(ptr, n) || globals.contains(ptr, n) || mapped.contains(ptr, n);
  }
  // Takes the allocation starting at base out of `allocations` for a free
  // (cudaFree, cudaFreeAsync): false when there is none, or when a graph
  // frees it itself (CUDA lets only that graph free it).
  bool take_allocation(uint64_t base) {
    return !graphs.freed_by_its_graph(base) && allocations.remove(base) != 0;
  }
  // This worker's address for client shared memory [client_ptr, +n), or
  // null when the range is not inside one registered region.
  void* shared_host(uint64_t client_ptr, size_t n) const;
  // False when a region already starts at client_base.
  bool add_shared(uint64_t client_base, SharedRegion region);
  // The client's address of this worker's mapping [local, +n) of client
  // shared memory: shared_host's inverse.
  std::optional<uint64_t> shared_client(uint64_t local, size_t n) const;
  // The region holding client_ptr and its client base address.
  std::optional<std::pair<uint64_t, SharedRegion>> shared_region(uint64_t client_ptr) const;
  // The region starting at client_base, taken out of the table.
  std::optional<SharedRegion> take_shared(uint64_t client_base);

  // Counts the resets of `device`, so that each connection drops the
  // staging buffers the reset destroyed.
  void note_reset(int device);
  uint64_t reset_epoch(int device) const;

  // What the session's allocations count against: its limit, its job's amount.
  SessionQuota quota;
  // What page-locked host memory the session makes this worker hold counts against.
  MemoryLimit host_memory{"max-session-host-memory"};
  AllocationTable allocations;
  AllocationTable globals;
  // Memory mapped for the session, by device base: shared page-locked
  // memory whose device address it asked for, managed memory, accessible
  // virtual memory ranges, opened IPC memory.
  AllocationTable mapped;
  // Allocations made at the client's addresses (kOpMallocAt), also in
  // `allocations`.
  FixedAddressMemory fixed_address;
  VmmTable vmm;
  // Multicast objects: also in vmm as allocations (cuMemMap maps them,
  // cuMemRelease frees them), and only these may be bound to.
  HandleSet multicast;
  IpcExports ipc_exports;
  // POSIX descriptor handles exported where descriptors cannot cross.
  DescriptorExports descriptor_exports;
  HandleSet ipc_imports;  // addresses of opened IPC memory handles
  HandleSet streams{"streams", "max-session-streams"};
  HandleSet events{"events", "max-session-events"};
  HandleSet modules{"modules", "max-session-modules"};
  PreloadedModules preloaded_modules;  // ahead of a move here (kOpModulePreload)
  HandleSet pools{"memory pools", "max-session-objects"};
  HandleSet pools_made_here;  // of `pools`, those cudaMemPoolCreate made (not imported, not a GPU's own)
  // The session as its IPC records name it, and who may open what it exports.
  IpcOwner ipc_owner;
  IpcSharing ipc_sharing = IpcSharing::owner;
  FunctionTable functions;
  HostCallbacks host_callbacks;
  // The daemon's counters (metrics); null outside a daemon.
  ServerCounters* counters = nullptr;
  // Warnings the client can trigger at will, rate limited.
  PeerWarnings warnings;
  // Bytes per block of a pipelined copy the client asked for; 0: by size.
  size_t pipeline_block = 0;
  // Contiguous bulk copies in place where the connection can (zero_copy.hpp).
  bool zero_copy = zero_copy_enabled(std::getenv("RGPU_UCX_ZERO_COPY"));
  // CUDA arrays (levels of mipmapped arrays too), mipmapped arrays, texture
  // and surface objects (array_handlers.cpp, texture_handlers.cpp).
  ArrayTable arrays;
  ArrayTable mipmaps;
  DeviceObjectSet textures{"texture objects"};
  DeviceObjectSet surfaces{"surface objects"};
  // Legacy references: texture references made by cuTexRefCreate, those of
  // modules, surface references (texture_reference_handlers.cpp).
  HandleSet texrefs{"texture references", "max-session-objects"};
  HandleSet module_texrefs;
  HandleSet surfrefs;
  GraphTable graphs;
  ExecGraphCopies exec_copies;  // what a move rebuilds executable graphs from
  GreenContextTable green;
  HostNodeRecords host_nodes{host_callbacks};
  // Where graph copies of pageable application memory are staged over tcp and ucx.
  GraphStagingSlabs graph_staging;
  // Imported external memory and semaphores (external_handlers.cpp); mapped
  // buffers are allocations, mapped mipmapped arrays are in `mipmaps`.
  ExternalMemoryTable external_memories;
  HandleSet external_semaphores{"external semaphores", "max-session-objects"};
  AsyncNotifications notifications;
  // NCCL communicators (nccl_handlers.cpp).
  NcclTable nccl_comms;

 private:
  Backend& backend_;
  std::vector<int> gpus_;
  std::string module_cache_dir_;
  SessionBounds bounds_;
  std::atomic<bool> logged_large_module_{false};
  mutable std::mutex mutex_;  // guards shared_ and resets_
  std::map<uint64_t, SharedRegion> shared_;  // by client base address
  std::map<int, uint64_t> resets_;
};

}  // namespace rgpu::server
