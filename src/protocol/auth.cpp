#include "protocol/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

std::vector<uint8_t> request_proof(const std::string& token, const Nonce& challenge, const std::string& request) {
  std::vector<uint8_t> message(challenge.begin(), challenge.end());
  message.insert(message.end(), request.begin(), request.end());
  std::vector<uint8_t> mac(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), message.data(), message.size(), mac.data(), &len);
  mac.resize(len);
  return mac;
}

bool same_secret(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool proof_matches(const std::string& token, const Nonce& challenge, const std::vector<uint8_t>& proof) {
  return same_secret(proof, auth_proof(token, challenge));
}

namespace {

std::string trimmed(const std::string& t) {
  auto b = t.find_first_not_of(" \t\r\n");
  auto e = t.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : t.substr(b, e - b + 1);
}

}  // namespace

std::string read_secret_file(const std::string& path, std::string* why) {
  // The mode of what is read, not of what the name led to a moment before.
  FILE* f = fopen(path.c_str(), "re");
  if (!f) {
    *why = path + ": " + strerror(errno);
    return "";
  }
  struct stat st {};
  std::string text;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = path + " is not a regular file";
  } else if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    *why = path + " has mode " + mode + ": its group or others may read it, so it is refused (chmod 600 " + path +
           ")";
  } else {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, f)) text.append(buf, n);
    text = trimmed(text);
    if (text.empty()) *why = path + " is empty";
  }
  fclose(f);
  return why->empty() ? text : "";
}

}  // namespace rgpu::proto
