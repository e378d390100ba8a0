// Rate-limited peer-triggered warnings and peer text made printable.
#include <gtest/gtest.h>

#include "common/printable.hpp"
#include "server/worker/peer_warnings.hpp"

using rgpu::server::PeerWarnings;
using namespace std::chrono_literals;

TEST(PeerWarnings, FirstFewThenOnePerPeriodWithACount) {
  PeerWarnings w(3, 10s);
  const auto t = PeerWarnings::Clock::now();
  uint64_t held = 0;
  int logged = 0;
  for (int i = 0; i < 100; ++i) logged += w.allow("unknown call", &held, t + std::chrono::milliseconds(i));
  EXPECT_EQ(logged, 3);
  // Another kind has its own count.
  EXPECT_TRUE(w.allow("oversized frame", &held, t));
  EXPECT_TRUE(w.allow("unknown call", &held, t + 11s));
  EXPECT_EQ(held, 97u);
  EXPECT_EQ(PeerWarnings::note(held), " (97 more like it not logged)");
  EXPECT_FALSE(w.allow("unknown call", &held, t + 12s));
}

TEST(Printable, EscapesControlAndNonAsciiAndCaps) {
  EXPECT_EQ(rgpu::printable("plain name-1.2"), "plain name-1.2");
  EXPECT_EQ(rgpu::printable("a\nb\x1b[31m\\"), "a\\x0ab\\x1b[31m\\x5c");
  EXPECT_EQ(rgpu::printable("\xc3\xa9"), "\\xc3\\xa9");
  EXPECT_EQ(rgpu::printable(std::string(1000, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(rgpu::printable(std::string("a\0b", 3)), "a\\x00b");
}
