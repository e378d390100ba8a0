// One host-test backend for a fuzz process, as a worker has one: made and
// initialised (GPUs 0 and 1) on first use.
#pragma once
#include "server/backend/backend.hpp"

namespace rgpu::fuzz {

server::Backend& host_test_backend();
// Frees what a session left on the backend's devices, as the end of a
// worker process would.
void reset_host_test_backend();

}  // namespace rgpu::fuzz
