#include "protocol/credential.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <stdexcept>

#include "common/hex.hpp"

namespace rgpu::proto {
namespace {

constexpr const char* kMacField = ";mac=";

// Job and user names as schedulers write them ("1234", "1234_7", "1234+1"):
// nothing that could be taken for a separator of the claims.
void check_name(const char* what, const std::string& s, bool may_be_empty) {
  if (s.empty() && !may_be_empty) throw std::invalid_argument(std::string("credential needs a ") + what);
  if (s.size() > 63) throw std::invalid_argument(std::string(what) + " longer than 63 characters");
  for (char c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != '+' && c != '@')
      throw std::invalid_argument(std::string(what) + " '" + s + "' has a character other than A-Z a-z 0-9 _-.+@");
}

template <typename T>
T to_number(const std::string& s, const char* what) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    throw std::invalid_argument(std::string(what) + " '" + s + "' is not a number");
  return v;
}

std::string gpu_text(const CredentialGpu& g) {
  std::string s = g.host + ":" + std::to_string(g.port) + ":" + std::to_string(g.gpu);
  if (g.amount) s += "=" + std::to_string(g.amount);
  if (g.share) s += "@" + std::to_string(g.share) + "%";
  return s;
}

}  // namespace

uint64_t parse_amount(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty memory amount");
  uint64_t unit = 1;
  std::string digits = text;
  switch (toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': unit = 1ull << 10; break;
    case 'M': unit = 1ull << 20; break;
    case 'G': unit = 1ull << 30; break;
    case 'T': unit = 1ull << 40; break;
    default: unit = 1;
  }
  if (unit != 1) digits.pop_back();
  uint64_t n = to_number<uint64_t>(digits, "memory amount");
  if (n == 0 || n > UINT64_MAX / unit) throw std::invalid_argument("memory amount '" + text + "' out of range");
  return n * unit;
}

CredentialGpu parse_credential_gpu(const std::string& text) {
  CredentialGpu g;
  std::string place = text;
  if (auto at = place.rfind('@'); at != std::string::npos) {
    const std::string share = place.substr(at + 1);
    if (share.empty() || share.back() != '%') throw std::invalid_argument("compute share '" + share + "' is not N%");
    g.share = to_number<int>(share.substr(0, share.size() - 1), "compute share");
    if (g.share < 1 || g.share > 100) throw std::invalid_argument("compute share '" + share + "' is not 1% to 100%");
    place = place.substr(0, at);
  }  if (auto eq = place.find('='); eq != std::string::npos) {
    g.amount = parse_amount(place.substr(eq + 1));
    place = text.substr(0, eq);
  }
  auto last = place.rfind(':');
  auto middle = last == std::string::npos || last == 0 ? std::string::npos : place.rfind(':', last - 1);
  if (middle == std::string::npos || middle == 0)
    throw std::invalid_argument("GPU '" + text + "' is not host:port:gpu[=amount][@share%]");
  g.host = place.substr(0, middle);
  g.port = to_number<uint16_t>(place.substr(middle + 1, last - middle - 1), "port");
  g.gpu = to_number<int>(place.substr(last + 1), "GPU");
  if (g.port == 0 || g.gpu < 0) throw std::invalid_argument("GPU '" + text + "' names port 0 or a negative GPU");
  for (char c : g.host)
    if (c == ';' || c == ',' || c == '=' || c == '@' || isspace(static_cast<unsigned char>(c)))
      throw std::invalid_argument("host '" + g.host + "' has a separator in it");
  return g;
}

std::string CredentialClaims::text() const {
  check_name("job", job, false);
  check_name("user", user, true);
  std::string s = "rgpu1;job=" + job + ";user=" + user + ";expires=" + std::to_string(expires) + ";gpus=";
  for (size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + gpu_text(gpus[i]);
  return s;
}

CredentialClaims CredentialClaims::parse(const std::string& text) {
  CredentialClaims c;
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    size_t semi = text.find(';', start);
    fields.push_back(text.substr(start, semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  if (fields.size() != 5 || fields[0] != "rgpu1") throw std::invalid_argument("not an rgpu1 credential");
  const char* names[] = {"job=", "user=", "expires=", "gpus="};
  for (int i = 0; i < 4; ++i)
    if (!fields[i + 1].starts_with(names[i])) throw std::invalid_argument(std::string("credential lacks ") + names[i]);
  c.job = fields[1].substr(4);
  c.user = fields[2].substr(5);
  c.expires = to_number<int64_t>(fields[3].substr(8), "expiry");
  std::string gpus = fields[4].substr(5);
  for (size_t start = 0; start < gpus.size();) {
    size_t comma = gpus.find(',', start);
    c.gpus.push_back(parse_credential_gpu(gpus.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (c.gpus.empty()) throw std::invalid_argument("credential names no GPU");
  // Canonical form only: one text per set of claims.
  if (c.text() != text) throw std::invalid_argument("credential claims are not in canonical form");
  return c;
}

std::vector<uint8_t> credential_mac(const std::string& job_key, const std::string& claims_text) {
  std::vector<uint8_t> mac(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  HMAC(EVP_sha256(), job_key.data(), static_cast<int>(job_key.size()),
       reinterpret_cast<const unsigned char*>(claims_text.data()), claims_text.size(), mac.data(), &len);
  mac.resize(len);
  return mac;
}

std::string issue_credential(const std::string& job_key, const CredentialClaims& claims) {
  std::string text = claims.text();
  return text + kMacField + hex(credential_mac(job_key, text));
}

std::optional<HeldCredential> split_credential(const std::string& line) {
  auto at = line.rfind(kMacField);
  if (at == std::string::npos) return std::nullopt;
  auto mac = from_hex(line.substr(at + std::char_traits<char>::length(kMacField)));
  if (!mac || mac->empty()) return std::nullopt;
  return HeldCredential{line.substr(0, at), *mac};
}

std::vector<uint8_t> credential_proof(const HeldCredential& c, const Nonce& challenge) {
  return auth_proof(std::string(c.mac.begin(), c.mac.end()), challenge);
}

bool credential_proof_matches(const std::string& job_key, const std::string& claims_text, const Nonce& challenge,
                              const std::vector<uint8_t>& proof) {
  auto mac = credential_mac(job_key, claims_text);
  return proof_matches(std::string(mac.begin(), mac.end()), challenge, proof);
}

}  // namespace rgpu::proto
