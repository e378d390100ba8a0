#include "protocol/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rgpu::proto {

Nonce random_nonce() {
  Nonce n;
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) throw std::runtime_error("no randomness for a challenge");
  return n;
}

std::vector<uint8_t> auth_proof(const std::string& token, const Nonce& challenge) {
  std::vector<uint8_t> mac(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), challenge.data(), challenge.size(), mac.data(),
       &len);
  mac.resize(len);
  return mac;
}

bool same_secret(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool proof_matches(const std::string& token, const Nonce& challenge, const std::vector<uint8_t>& proof) {
  return same_secret(proof, auth_proof(token, challenge));
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  auto b = t.find_first_not_of(" \t\r\n");
  auto e = t.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

}  // namespace rgpu::proto
