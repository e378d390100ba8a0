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
// The GPU's default memory pool, where the application named it
// (cudaDeviceGetDefaultMemPool): the target's stands in for the source's,
// with the reuse policies and release threshold the application gave it.
// Old handle -> new, for the client's records.
std::map<uint64_t, uint64_t> carry_default_pool(Session& from, int remote, Session& to, int gpu, int device);

}  // namespace rgpu::client
