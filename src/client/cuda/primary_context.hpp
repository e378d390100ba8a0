// The handle of a device's primary context, the only kind of context rgpu's
// driver API has (see context.cpp).
#pragma once
#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

CUcontext primary_context(int device);
// The device of a context handle rgpu gave out, or -1.
// The device of a context handle rgpu gave out; NULL names the current
// context. -1 for any other handle.
int context_device(CUcontext ctx);

}  // namespace rgpu::client
