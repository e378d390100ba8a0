// cuda.h binds API names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2)
// and, for per-thread default stream builds, adds _ptds or _ptsz.
#pragma once
#include <cstddef>

namespace rgpu::client {

struct ProcName {
  const char* api;
  const char* symbol;
  const char* per_thread;  // "ptds", "ptsz" or ""
};

extern const ProcName kProcNames[];
extern const size_t kProcNameCount;

}  // namespace rgpu::client
