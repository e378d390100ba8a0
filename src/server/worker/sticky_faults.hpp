// Errors after which a CUDA context is unusable (a kernel's illegal address,
// device assert, a lost MPS server...). On an MPS GPU one client's fault
// may bring down every client's, so a worker tells the daemon, which then
// checks the GPU's MPS daemon (mps_daemons.hpp).
#pragma once
#include <cstdint>

#include "server/pool/server_counters.hpp"

namespace rgpu::server {

bool is_sticky_fault(int32_t status);
// Counts the worker's first sticky fault on `gpu` (a worker serves one
// session: later ones are the same fault's echoes).
void report_sticky_fault(ServerCounters* counters, int gpu, int32_t status);

}  // namespace rgpu::server
