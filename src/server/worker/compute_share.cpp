#include "server/worker/compute_share.hpp"

#include <cstdlib>
#include <string>

#include "common/log.hpp"

namespace rgpu::server {

int apply_compute_share(const SessionClaim& claim) {
  // One process, one share: the tightest of its GPUs' holds for all.
  int share = 0;
  for (int s : claim.shares)
    if (s > 0 && (share == 0 || s < share)) share = s;
  if (share == 0) return 0;
  setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(share).c_str(), 1);
  RGPU_LOG(debug, "compute share %d %% of SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) set before CUDA starts", share);
  return share;
}

}  // namespace rgpu::server
