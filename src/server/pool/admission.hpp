// Who may open a session, and on which GPUs: with a job key configured,
// only a job holding a valid credential for each GPU it opens; and the
// ledger's rules (ended jobs, exclusive GPUs) for every session.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/auth.hpp"
#include "protocol/handshake.hpp"
#include "server/pool/job_ledger.hpp"

namespace rgpu::server {

struct PoolPolicy {
  std::string job_key;          // empty: no credentials needed
  uint16_t port = 0;            // this server's, as credentials name it
  std::vector<GpuMode> modes;   // by ordinal; beyond: shared
  JobLedger* ledger = nullptr;  // null outside a daemon (tests of a lone worker)
};

// Checks the hello's credential for the GPUs it asks for (none: any GPU of
// this server will do, for a probe). Empty when valid (and `claim` filled
// from it), else why not.
std::string check_credential(const PoolPolicy& policy, const proto::Hello& hello, const proto::Nonce& challenge,
                             SessionClaim* claim);

// The scheduler side speaks: the hello proves the job key.
bool proves_job_key(const PoolPolicy& policy, const proto::Hello& hello, const proto::Nonce& challenge);

}  // namespace rgpu::server
