// The session's modules loaded on a move's target ahead of the pause
// (docs/migration.md): NVIDIA's libraries hand over images of hundreds of
// megabytes, and the driver loads each kernel's code at its first lookup. The
// target keeps them, their kernels looked up (kOpModulePreload); the
// session's loads there after the move, as ever lazy, take them at once.
#pragma once
#include <cstddef>

namespace rgpu::client {

class Session;

struct PreloadOutcome {
  size_t modules = 0;
  size_t bytes_sent = 0;  // images the target did not have
  double ms = 0;
};

// Each fat binary and driver-API module loaded on `device`, loaded on the
// target too. Never refuses: a module not preloaded loads at its next use.
PreloadOutcome preload_modules(Session& to, int gpu, int device);

}  // namespace rgpu::client
