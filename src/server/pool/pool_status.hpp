// The pool's state on this server as JSON, for `rgpu smi`: each exported
// GPU with its mode, memory and utilisation, the jobs on it with their
// amounts and use, and every session (client host, process, pid).
#pragma once
#include <string>
#include <vector>

#include "server/backend/backend.hpp"
#include "server/pool/admission.hpp"

namespace rgpu::server {
std::string pool_status_json(Backend& backend, const std::vector<int>& gpus, const PoolPolicy& policy);
}
