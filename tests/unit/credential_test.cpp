#include <gtest/gtest.h>

#include <stdexcept>

#include "protocol/credential.hpp"

using namespace rgpu::proto;

namespace {
CredentialClaims claims() {
  CredentialClaims c;
  c.job = "1234_7";
  c.user = "alice";
  c.expires = 1900000000;
  c.gpus = {{"gpu-a", 18515, 0, 512ull << 20}, {"gpu-b", 18516, 3, 0}};
  return c;
}
}  // namespace

TEST(Credential, TextRoundTripsAndIsCanonical) {
  auto c = claims();
  EXPECT_EQ(c.text(), "rgpu1;job=1234_7;user=alice;expires=1900000000;gpus=gpu-a:18515:0=536870912,gpu-b:18516:3");
  auto back = CredentialClaims::parse(c.text());
  EXPECT_EQ(back.job, c.job);
  EXPECT_EQ(back.user, c.user);
  EXPECT_EQ(back.expires, c.expires);
  EXPECT_EQ(back.gpus, c.gpus);
  // The same claims written another way are refused: one text per claims.
  EXPECT_THROW(CredentialClaims::parse("rgpu1;job=1234_7;user=alice;expires=01900000000;gpus=gpu-a:18515:0"),
               std::invalid_argument);
  EXPECT_THROW(CredentialClaims::parse("rgpu1;job=1;user=;expires=5;gpus="), std::invalid_argument);
  EXPECT_THROW(CredentialClaims::parse("rgpu2;job=1;user=;expires=5;gpus=h:1:0"), std::invalid_argument);
  EXPECT_THROW(CredentialClaims::parse("rgpu1;job=1;user=;expires=5;gpus=h:1:0;extra=1"), std::invalid_argument);
}

TEST(Credential, NamesAreCheckedForSeparators) {
  auto c = claims();
  c.job = "12;gpus=evil:1:0";
  EXPECT_THROW(c.text(), std::invalid_argument);
  c = claims();
  c.user = "a,b";
  EXPECT_THROW(c.text(), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h;x:1:0"), std::invalid_argument);
}

TEST(Credential, GpuAndAmountParsing) {
  EXPECT_EQ(parse_amount("512M"), 512ull << 20);
  EXPECT_EQ(parse_amount("4G"), 4ull << 30);
  EXPECT_EQ(parse_amount("4g"), 4ull << 30);
  EXPECT_EQ(parse_amount("1000"), 1000u);
  EXPECT_THROW(parse_amount("0"), std::invalid_argument);
  EXPECT_THROW(parse_amount("M"), std::invalid_argument);
  EXPECT_THROW(parse_amount("1X"), std::invalid_argument);
  EXPECT_THROW(parse_amount("99999999999T"), std::invalid_argument);
  auto g = parse_credential_gpu("node-7.cluster:18515:2=1G");
  EXPECT_EQ(g.host, "node-7.cluster");
  EXPECT_EQ(g.port, 18515);
  EXPECT_EQ(g.gpu, 2);
  EXPECT_EQ(g.amount, 1ull << 30);
  EXPECT_EQ(parse_credential_gpu("h:1:0").amount, 0u);
  EXPECT_THROW(parse_credential_gpu("h:0"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h:0:0"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h:x:0"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu(":1:0"), std::invalid_argument);
}

TEST(Credential, ComputeShareIsClaimedBesideTheAmount) {
  auto g = parse_credential_gpu("h:1:0=1G@25%");
  EXPECT_EQ(g.amount, 1ull << 30);
  EXPECT_EQ(g.share, 25);
  EXPECT_EQ(parse_credential_gpu("h:1:0@100%").share, 100);
  EXPECT_EQ(parse_credential_gpu("h:1:0").share, 0);
  EXPECT_THROW(parse_credential_gpu("h:1:0@0%"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h:1:0@101%"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h:1:0@25"), std::invalid_argument);
  EXPECT_THROW(parse_credential_gpu("h@x:1:0"), std::invalid_argument);
  auto c = claims();
  c.gpus[0].share = 30;
  EXPECT_EQ(c.text(), "rgpu1;job=1234_7;user=alice;expires=1900000000;gpus=gpu-a:18515:0=536870912@30%,gpu-b:18516:3");
  EXPECT_EQ(CredentialClaims::parse(c.text()).gpus, c.gpus);
  // A bigger share written into an issued credential no longer matches its MAC.
  const std::string key = "scheduler-key";
  auto held = split_credential(issue_credential(key, c));
  ASSERT_TRUE(held);
  std::string tampered = held->claims;
  tampered.replace(tampered.find("@30%"), 4, "@90%");
  Nonce challenge = random_nonce();
  auto proof = credential_proof(*held, challenge);
  EXPECT_TRUE(credential_proof_matches(key, held->claims, challenge, proof));
  EXPECT_FALSE(credential_proof_matches(key, tampered, challenge, proof));
}

TEST(Credential, ProofNeedsTheKeyAndTheExactClaims) {
  const std::string key = "scheduler-key";
  std::string line = issue_credential(key, claims());
  auto held = split_credential(line);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->claims, claims().text());
  Nonce challenge = random_nonce();
  auto proof = credential_proof(*held, challenge);
  EXPECT_TRUE(credential_proof_matches(key, held->claims, challenge, proof));
  // Another key (a foreign scheduler), another challenge (a replay), or
  // altered claims (a bigger amount, a later expiry) do not prove.
  EXPECT_FALSE(credential_proof_matches("other-key", held->claims, challenge, proof));
  EXPECT_FALSE(credential_proof_matches(key, held->claims, random_nonce(), proof));
  auto bigger = claims();
  bigger.gpus[0].amount *= 2;
  EXPECT_FALSE(credential_proof_matches(key, bigger.text(), challenge, proof));
  auto later = claims();
  later.expires += 1;
  EXPECT_FALSE(credential_proof_matches(key, later.text(), challenge, proof));
  // The proof is not the MAC: what crosses the wire cannot be replayed as
  // the credential.
  EXPECT_NE(proof, held->mac);
}

TEST(Credential, SplitRefusesWhatIsNoCredential) {
  EXPECT_FALSE(split_credential("rgpu1;job=1"));
  EXPECT_FALSE(split_credential("rgpu1;job=1;mac="));
  EXPECT_FALSE(split_credential("rgpu1;job=1;mac=zz"));
  EXPECT_FALSE(split_credential("rgpu1;job=1;mac=abc"));
}
