// What keeps a session from moving to another worker (docs/migration.md):
// the state a move does not carry (and what of its graphs cannot move). The worker's tables are the authority, so
// a kind of state the client does not track still refuses the move.
#include <algorithm>
#include <string>
#include <vector>

#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/graph_move.hpp"
#include "server/worker/request.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

struct Held {
  size_t count;
  const char* what;
};

// Mapped memory that does not move: all but the application's page-locked
// memory shared over shm and mapped here at the application's own address,
// which the target maps at that address too, so the GPU reaches it where it
// did (the client checks); virtual memory counts as such.
size_t mapped_that_stays(const SessionContext& s) {
  size_t n = 0;
  for (const auto& [base, size] : s.mapped.list()) n += s.shared_client(base, size) != base && !s.vmm.accessible(base, size);
  return n;
}

// Pools imported from another process: the session's pools but those it
// made, which the client makes again on the target, and its GPUs' default
// ones, which it may have named (cudaDeviceGetDefaultMemPool) and whose
// counterparts on the target the client names instead.
// Counted while calls may run (the move's early check): never below none.
size_t pools_imported(SessionContext& s) {
  long n = static_cast<long>(s.pools.size()) - static_cast<long>(s.pools_made_here.size());
  for (int gpu : s.gpus()) {
    Handle pool = 0;
    if (s.backend().device_get_default_mem_pool(&pool, gpu) == cudaSuccess && s.pools.contains(pool) &&
        !s.pools_made_here.contains(pool))
      --n;
  }
  return static_cast<size_t>(std::max(n, 0L));
}

int32_t move_check(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  const Held held[] = {
      {s.vmm.imported(), "virtual memory imported from another process"},
      {s.multicast.size(), "multicast objects"},
      {s.arrays.size() + s.mipmaps.size(), "CUDA arrays"},
      {s.textures.size() + s.surfaces.size() + s.texrefs.size(), "texture or surface objects"},
      {pools_imported(s), "memory pools imported from another process"},
      {s.ipc_exports.size() + s.descriptor_exports.size(), "memory or events exported to other processes (IPC, shareable handles)"},
      {s.ipc_imports.size(), "memory opened from another process (IPC)"},
      {mapped_that_stays(s), "mapped memory (managed memory over shm, opened IPC memory)"},
      {s.external_memories.size() + s.external_semaphores.size(), "external memory or semaphores"},
      {s.nccl_comms.size(), "NCCL communicators (their peers are other sessions)"},
      {s.green.size(), "green contexts"},
  };
  std::vector<std::string> reasons;
  for (const auto& h : held)
    if (h.count) reasons.push_back("the session holds " + std::to_string(h.count) + " " + h.what);
  for (const auto& why : graph_move_reasons(s)) reasons.push_back("the session holds " + why);
  out.put<uint32_t>(static_cast<uint32_t>(reasons.size()));
  for (const auto& r : reasons) out.put_string(r);
  // What the move makes again at the same addresses: the session's
  // allocations (its modules' variables load again with the modules).
  const auto allocations = s.allocations.list();
  out.put<uint32_t>(static_cast<uint32_t>(allocations.size()));
  for (const auto& [base, size] : allocations) out.put<uint64_t>(base).put<uint64_t>(size);
  return 0;
}

}  // namespace

void register_move_handlers(Dispatcher& d) { d.add(proto::kOpMoveCheck, move_check); }

}  // namespace rgpu::server
