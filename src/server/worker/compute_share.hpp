// A session's compute share on an MPS GPU: the percentage of SMs its job's
// credential gives it, handed to MPS as CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
// MPS takes it when the process first connects and never again, so it must
// be set before the worker's CUDA starts.
#pragma once
#include "server/pool/job_ledger.hpp"

namespace rgpu::server {

// Sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to the smallest share the claim
// names for its GPUs; returns it (0: none named, nothing set).
int apply_compute_share(const SessionClaim& claim);

}  // namespace rgpu::server
