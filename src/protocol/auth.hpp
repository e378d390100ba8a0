// Shared-token authentication: the server sends a random challenge, the
// client answers with HMAC-SHA256(token, challenge). The token never
// crosses the wire.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rgpu::proto {

using Nonce = std::array<uint8_t, 32>;

Nonce random_nonce();
std::vector<uint8_t> auth_proof(const std::string& token, const Nonce& challenge);
// HMAC-SHA256(token, challenge || request): a proof bound to what it asks
// (the admin endpoint's requests, whose channel may be plain HTTP).
std::vector<uint8_t> request_proof(const std::string& token, const Nonce& challenge, const std::string& request);
// Constant-time comparison of two secrets.
bool same_secret(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);
// Constant-time comparison with the expected proof.
bool proof_matches(const std::string& token, const Nonce& challenge, const std::vector<uint8_t>& proof);
// A secret's file (token, job key, job credential; surrounding white space
// ignored), but only if its group and others may not read or write it, as
// ssh insists for keys: else, and when it is unreadable or empty, empty
// with *why (which says how to fix the mode).
std::string read_secret_file(const std::string& path, std::string* why);

}  // namespace rgpu::proto
