// A stand-in for the time the driver takes to create a CUDA context.
#pragma once

namespace rgpu::server {

// Waits RGPU_HOST_TEST_START_MS milliseconds (none: at once), one process
// of the machine at a time, as the GPU driver creates contexts: tests see
// the daemon under the start-up latency a GPU machine has. Called where the
// cuda backend creates a context: a worker's first GPU at its start, another
// GPU when first made current.
void host_test_context_delay();

}  // namespace rgpu::server
