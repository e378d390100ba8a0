// Job credentials: the scheduler side, holding the job key, issues a job a
// credential naming its GPUs (host:port:gpu, each with a memory amount) and
// when it expires; servers with the same key admit only sessions that
// prove they hold one.
//
// A credential is one line: its claims in clear, then ";mac=" and the
// HMAC-SHA256 of the claims under the job key (hex). The claims travel in
// the hello; the MAC never does: the client proves it holds it with
// HMAC(mac, challenge), the token proof of auth.hpp keyed by the MAC.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/auth.hpp"

namespace rgpu::proto {

struct CredentialGpu {
  std::string host;
  uint16_t port = 0;
  int gpu = 0;
  uint64_t amount = 0;  // bytes of GPU memory the job may hold; 0: no limit
  // Percentage of the GPU's SMs each of the job's sessions may use where
  // the GPU is shared through MPS (1 to 100); 0: no share given.
  int share = 0;

  bool operator==(const CredentialGpu&) const = default;
};

struct CredentialClaims {
  std::string job;
  std::string user;
  int64_t expires = 0;  // Unix time, seconds
  std::vector<CredentialGpu> gpus;

  // The canonical text the MAC covers.
  std::string text() const;
  // Throws std::invalid_argument naming what is wrong.
  static CredentialClaims parse(const std::string& text);
  // The entry for GPU `gpu` of port `port` whose host `is_this_host` accepts.
  template <typename HostTest>
  const CredentialGpu* find(uint16_t port, int gpu, HostTest is_this_host) const {
    for (const auto& g : gpus)
      if (g.port == port && g.gpu == gpu && is_this_host(g.host)) return &g;
    return nullptr;
  }
};

// The MAC of the claims under the job key: the credential's secret part.
std::vector<uint8_t> credential_mac(const std::string& job_key, const std::string& claims_text);
// "claims;mac=hex".
std::string issue_credential(const std::string& job_key, const CredentialClaims& claims);

// A credential line split into its claims text and MAC; nullopt when it is
// not one.
struct HeldCredential {
  std::string claims;
  std::vector<uint8_t> mac;
};
std::optional<HeldCredential> split_credential(const std::string& line);
// What the client sends for a challenge: HMAC(mac, challenge).
std::vector<uint8_t> credential_proof(const HeldCredential& c, const Nonce& challenge);
// Server side: the proof was made with the MAC the job key gives these claims.
bool credential_proof_matches(const std::string& job_key, const std::string& claims_text, const Nonce& challenge,
                              const std::vector<uint8_t>& proof);

// "512M", "4G", "1048576": bytes (K, M, G, T are powers of 1024). Throws
// std::invalid_argument.
uint64_t parse_amount(const std::string& text);
// "host:port:gpu[=amount][@share%]" as `rgpu credential --gpu` takes it.
CredentialGpu parse_credential_gpu(const std::string& text);

}  // namespace rgpu::proto
