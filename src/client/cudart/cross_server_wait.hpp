// A stream waiting for an event recorded on another server's GPU, which no
// GPU server can see. The waiting stream waits (cuStreamWaitValue32) on a
// flag in its own device's memory; a client thread sets the flag once the
// event has completed. Stream order is kept without blocking the caller.
#pragma once
#include <cuda_runtime_api.h>

namespace rgpu::client {

cudaError_t wait_across_servers(cudaStream_t stream, int stream_device, cudaEvent_t event);

}  // namespace rgpu::client
