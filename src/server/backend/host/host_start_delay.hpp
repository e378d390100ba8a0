// A stand-in for the time a worker takes to create its CUDA contexts.
#pragma once

namespace rgpu::server {

// Waits RGPU_HOST_TEST_START_MS milliseconds (none: at once), one worker of
// the machine at a time, as the GPU driver creates contexts: tests see the
// daemon under the start-up latency a GPU machine has.
void host_test_start_delay();

}  // namespace rgpu::server
