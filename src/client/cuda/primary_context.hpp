// The handle of a device's primary context, the only kind of context rgpu's
// driver API has (see context.cpp).
#pragma once
#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

CUcontext primary_context(int device);
// The device of a context handle rgpu gave out, or -1.
int context_device(CUcontext ctx);
// The same, where NULL names the current context.
int context_or_current_device(CUcontext ctx);

}  // namespace rgpu::client
