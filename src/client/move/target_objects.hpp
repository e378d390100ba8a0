// Streams and events a session move makes, or lets go of, on a server by
// its session directly (the device's calls route to the old server until
// the commit): the application's, made again on the target, and the move's
// own timing events.
#pragma once
#include <cstdint>
#include <string>

namespace rgpu::client {

class Session;

enum class ObjectKind { stream, event };

// Made on `s`'s GPU `gpu` with `flags` (and, for a stream, `priority`): its
// server handle. Refuses (MoveRefusal), naming `what`, when the server does not.
uint64_t make_object(Session& s, int gpu, ObjectKind kind, uint32_t flags, int32_t priority, const std::string& what);
// Destroyed there; a failure only leaves it to the session's end.
void destroy_object(Session& s, int gpu, ObjectKind kind, uint64_t handle);

}  // namespace rgpu::client
