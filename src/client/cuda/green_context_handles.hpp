// The client's green contexts: a CUgreenCtx points at one of these, and the
// CUcontext cuCtxFromGreenCtx returns points into it, so the context calls
// (context.cpp) tell a green context's CUcontext from a primary one. The
// server knows a green context by its session slot, which calls made in it
// carry in their frame header (Runtime::set_current_context).
#pragma once
#include "client/cuda/cuda_api.hpp"

#include <cstdint>

namespace rgpu::client {

struct GreenContext {
  int device;          // virtual device index
  uint16_t slot;       // the server session's slot
  uint64_t id;         // cuGreenCtxGetId's
  char as_context[1];  // its address is the green context's CUcontext
};

CUgreenCtx add_green_context(int device, uint16_t slot, uint64_t id);
bool remove_green_context(CUgreenCtx g);
// Copies out a live green context; false if g is not one.
bool find_green_context(CUgreenCtx g, GreenContext* out);
// The green context a CUcontext from cuCtxFromGreenCtx stands for.
bool find_green_context(CUcontext ctx, GreenContext* out);
// The handle of the live green context in `slot` of `device`, or null.
CUgreenCtx green_context_in_slot(int device, uint16_t slot);
CUcontext context_of_green(CUgreenCtx g);

}  // namespace rgpu::client
