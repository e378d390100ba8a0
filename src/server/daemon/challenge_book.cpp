#include "server/daemon/challenge_book.hpp"

#include <algorithm>
#include <cstdio>

namespace rgpu::server {
namespace {

std::string hex(const proto::Nonce& n) {
  std::string out;
  char byte[3];
  for (uint8_t b : n) {
    std::snprintf(byte, sizeof byte, "%02x", b);
    out += byte;
  }
  return out;
}

}  // namespace

std::string ChallengeBook::issue(std::chrono::steady_clock::time_point now) {
  const proto::Nonce n = proto::random_nonce();
  std::lock_guard lock(mutex_);
  if (open_.size() >= kMaxOpen) open_.pop_front();
  open_.push_back({n, now});
  return hex(n);
}

std::optional<proto::Nonce> ChallengeBook::take(const std::string& text, std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  while (!open_.empty() && now - open_.front().issued > kLifetime) open_.pop_front();
  auto it = std::find_if(open_.begin(), open_.end(), [&](const Open& o) { return hex(o.nonce) == text; });
  if (it == open_.end()) return std::nullopt;
  const proto::Nonce n = it->nonce;
  open_.erase(it);
  return n;
}

}  // namespace rgpu::server
