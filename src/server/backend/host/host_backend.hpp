// TEST BACKEND. Host memory stands in for the GPU so the whole path (client
// library, protocol, worker, validation) runs in CI without one. Memory,
// stream and event semantics are real (work runs at once, in order); kernels
// are registered and their launches validated against the fat binary's
// parameter layout, but never executed. Not for production use.
#pragma once
#include <memory>

#include "server/backend/backend.hpp"

namespace rgpu::server {
std::unique_ptr<Backend> make_host_test_backend();
}
