// The client's spare server events: kept apart by device, context and
// flags, each handed out once, and dropped with their device's reset.
#include "client/cudart/event_reserve.hpp"

#include <gtest/gtest.h>

using rgpu::client::EventReserve;

TEST(EventReserve, HandsEachSpareOutOnceForItsOwnDeviceContextAndFlags) {
  EventReserve r;
  uint64_t got = 0;
  EXPECT_FALSE(r.take(0, 0, 0, &got));
  r.put(0, 0, 0, 11);
  r.put(0, 0, 2, 12);   // other flags (timing off)
  r.put(0, 1, 0, 13);   // another green context of the device
  r.put(1, 0, 0, 14);   // another device
  EXPECT_FALSE(r.take(0, 0, 1, &got));
  ASSERT_TRUE(r.take(0, 0, 0, &got));
  EXPECT_EQ(got, 11u);
  EXPECT_FALSE(r.take(0, 0, 0, &got));
  ASSERT_TRUE(r.take(0, 0, 2, &got));
  EXPECT_EQ(got, 12u);
  ASSERT_TRUE(r.take(0, 1, 0, &got));
  EXPECT_EQ(got, 13u);
  ASSERT_TRUE(r.take(1, 0, 0, &got));
  EXPECT_EQ(got, 14u);
}

TEST(EventReserve, ADeviceResetDropsOnlyThatDevicesSpares) {
  EventReserve r;
  r.put(0, 0, 0, 21);
  r.put(0, 3, 2, 22);
  r.put(1, 0, 0, 23);
  r.forget_device(0);
  uint64_t got = 0;
  EXPECT_FALSE(r.take(0, 0, 0, &got));
  EXPECT_FALSE(r.take(0, 3, 2, &got));
  ASSERT_TRUE(r.take(1, 0, 0, &got));
  EXPECT_EQ(got, 23u);
}
