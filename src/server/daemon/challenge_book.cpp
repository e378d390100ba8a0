#include "server/daemon/challenge_book.hpp"

#include <algorithm>

#include "common/hex.hpp"

namespace rgpu::server {

std::string ChallengeBook::issue(std::chrono::steady_clock::time_point now) {
  const proto::Nonce n = proto::random_nonce();
  std::lock_guard lock(mutex_);
  if (open_.size() >= kMaxOpen) open_.pop_front();
  open_.push_back({n, now});
  return hex(std::span<const uint8_t>(n));
}

std::optional<proto::Nonce> ChallengeBook::take(const std::string& text, std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  // Named as issue() wrote it: the challenge's bytes once, not each open
  // one's text.
  const auto wanted = from_hex(text);
  if (!wanted || wanted->size() != proto::Nonce{}.size() || hex(*wanted) != text) return std::nullopt;
  while (!open_.empty() && now - open_.front().issued > kLifetime) open_.pop_front();
  auto it = std::find_if(open_.begin(), open_.end(),
                         [&](const Open& o) { return std::equal(o.nonce.begin(), o.nonce.end(), wanted->begin()); });
  if (it == open_.end()) return std::nullopt;
  const proto::Nonce n = it->nonce;
  open_.erase(it);
  return n;
}

}  // namespace rgpu::server
