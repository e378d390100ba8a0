// Settings a session move carries to the target (docs/migration.md): what
// the application set on the old server, set on the new one where it
// differs. Each refuses (MoveRefusal) when the target does not take it.
#pragma once
#include <cstdint>
#include <map>

namespace rgpu::client {

class Session;

// The context's limits and cache preference.
void carry_context_settings(Session& from, int remote, Session& to, int gpu);
// The memory pools the application named: for the GPU's default one
// (cudaDeviceGetDefaultMemPool) the target's stands in; each it made
// (cudaMemPoolCreate) is made again there with its properties, and is the
// GPU's current pool there if it was here. Each keeps the reuse policies
// and release threshold the application gave it. Refused for a pool
// imported from another process. Old handle -> new, for the client's
// records. The pools' allocations move with the rest of the memory.
std::map<uint64_t, uint64_t> carry_pools(Session& from, int remote, Session& to, int gpu, int device);

}  // namespace rgpu::client
