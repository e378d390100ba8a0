// The admin endpoint's challenges (server/daemon/challenge_book.hpp) and the
// proof bound to a request (proto::request_proof): a challenge serves once
// and for a limited time, and a proof holds only for the request it names.
#include "server/daemon/challenge_book.hpp"

#include <gtest/gtest.h>

#include <string>

using rgpu::server::ChallengeBook;

namespace {

TEST(ChallengeBook, AChallengeServesOnceAndNotPastItsLifetime) {
  ChallengeBook book;
  const auto now = std::chrono::steady_clock::now();
  const std::string a = book.issue(now), b = book.issue(now);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(book.take(a, now));
  EXPECT_FALSE(book.take(a, now));  // used
  EXPECT_FALSE(book.take(b, now + ChallengeBook::kLifetime + std::chrono::seconds(1)));  // expired
  EXPECT_FALSE(book.take("not a challenge", now));
}

TEST(ChallengeBook, KeepsABoundedNumberOpenForgettingTheOldest) {
  ChallengeBook book;
  const auto now = std::chrono::steady_clock::now();
  const std::string first = book.issue(now);
  std::string last;
  for (size_t i = 0; i < ChallengeBook::kMaxOpen; ++i) last = book.issue(now);
  EXPECT_FALSE(book.take(first, now));
  EXPECT_TRUE(book.take(last, now));
}

TEST(ChallengeBook, AProofHoldsOnlyForTheKeyTheChallengeAndTheRequestItNames) {
  const rgpu::proto::Nonce n = rgpu::proto::random_nonce(), other = rgpu::proto::random_nonce();
  const auto proof = rgpu::proto::request_proof("job key", n, "move 4711 gpu2:18515/1");
  EXPECT_EQ(proof.size(), 32u);
  EXPECT_TRUE(rgpu::proto::same_secret(proof, rgpu::proto::request_proof("job key", n, "move 4711 gpu2:18515/1")));
  EXPECT_FALSE(rgpu::proto::same_secret(proof, rgpu::proto::request_proof("job key", n, "move 4711 evil:1/0")));
  EXPECT_FALSE(rgpu::proto::same_secret(proof, rgpu::proto::request_proof("job key", other, "move 4711 gpu2:18515/1")));
  EXPECT_FALSE(rgpu::proto::same_secret(proof, rgpu::proto::request_proof("other key", n, "move 4711 gpu2:18515/1")));
}

}  // namespace
