#include "server/pool/admission.hpp"

#include <ctime>
#include <stdexcept>

#include "protocol/credential.hpp"
#include "server/pool/local_host.hpp"

namespace rgpu::server {

std::string check_credential(const PoolPolicy& policy, const proto::Hello& hello, const proto::Nonce& challenge,
                             SessionClaim* claim) {
  if (policy.job_key.empty()) return "";
  if (hello.credential.empty())
    return "this server admits jobs only, and the client holds no credential (RGPU_CREDENTIAL or "
           "RGPU_CREDENTIAL_FILE)";
  if (!proto::credential_proof_matches(policy.job_key, hello.credential, challenge, hello.credential_proof))
    return "the credential was not issued with this server's job key (foreign or altered)";
  proto::CredentialClaims c;
  try {
    c = proto::CredentialClaims::parse(hello.credential);
  } catch (const std::invalid_argument& e) {
    return std::string("malformed credential: ") + e.what();
  }
  int64_t now = time(nullptr);
  if (c.expires <= now)
    return "the credential of job " + c.job + " expired " + std::to_string(now - c.expires) + " s ago";
  if (policy.ledger && policy.ledger->job_ended(c.job)) return "job " + c.job + " has ended";
  claim->job = c.job;
  claim->user = c.user;
  claim->expires = c.expires;
  for (int g : hello.gpus) {
    const proto::CredentialGpu* entry = c.find(policy.port, g, names_this_host);
    if (!entry)
      return "the credential of job " + c.job + " does not name GPU " + std::to_string(g) + " of this server (port " +
             std::to_string(policy.port) + ")";
    claim->amounts.push_back(entry->amount);
    claim->shares.push_back(entry->share);
  }
  if (hello.gpus.empty()) {
    bool any = false;
    for (const auto& g : c.gpus) any = any || (g.port == policy.port && names_this_host(g.host));
    if (!any) return "the credential of job " + c.job + " names no GPU of this server";
  }
  return "";
}

bool proves_job_key(const PoolPolicy& policy, const proto::Hello& hello, const proto::Nonce& challenge) {
  return !policy.job_key.empty() && proto::proof_matches(policy.job_key, challenge, hello.key_proof);
}

}  // namespace rgpu::server
