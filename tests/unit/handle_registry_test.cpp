// The client's handles of server objects: made, found, interned, removed.
#include "client/core/handles.hpp"

#include <gtest/gtest.h>

using rgpu::client::HandleRegistry;
using rgpu::client::RemoteObject;

TEST(HandleRegistry, InternGivesOneHandlePerServerObject) {
  HandleRegistry<cudaGraph_t> r;
  cudaGraph_t a = r.intern(0, 7);
  EXPECT_EQ(r.intern(0, 7), a);
  EXPECT_NE(r.intern(1, 7), a);  // another device's object
  RemoteObject o;
  ASSERT_TRUE(r.find(a, &o));
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.remote, 7u);
  EXPECT_TRUE(r.remove(a));
  EXPECT_FALSE(r.find(a, &o));
  EXPECT_FALSE(r.remove(a));
  EXPECT_FALSE(r.find(reinterpret_cast<cudaGraph_t>(&o), &o));  // never made here
}

TEST(HandleRegistry, AddMakesAHandleEachTimeThatInternFinds) {
  HandleRegistry<cudaEvent_t> r;
  cudaEvent_t first = r.add(0, 9), second = r.add(0, 9);
  EXPECT_NE(first, second);
  EXPECT_EQ(r.intern(0, 9), first);
  // Each is destroyed once; the other stays.
  EXPECT_TRUE(r.remove(second));
  EXPECT_EQ(r.intern(0, 9), first);
  EXPECT_TRUE(r.remove(first));
  RemoteObject o;
  EXPECT_FALSE(r.find(first, &o));
}

TEST(HandleRegistry, RewriteGivesAMovedDevicesObjectsTheirNewServerHandles) {
  HandleRegistry<cudaStream_t> r;
  cudaStream_t a = r.add(0, 10, cudaStreamNonBlocking, -2), b = r.add(0, 11), other = r.add(1, 10);
  auto listed = r.on_device(0);
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& [handle, listed_object] : listed) {
    EXPECT_EQ(listed_object.device, 0);
    EXPECT_TRUE(handle == a || handle == b);
  }
  r.rewrite(0, {{10, 110}, {11, 111}});
  RemoteObject o;
  ASSERT_TRUE(r.find(a, &o));
  EXPECT_EQ(o.remote, 110u);
  EXPECT_EQ(o.flags, static_cast<uint32_t>(cudaStreamNonBlocking));  // what it was made with stays
  EXPECT_EQ(o.priority, -2);
  ASSERT_TRUE(r.find(b, &o));
  EXPECT_EQ(o.remote, 111u);
  ASSERT_TRUE(r.find(other, &o));  // another device's object is untouched
  EXPECT_EQ(o.remote, 10u);
  // Interning finds the objects under their new handles, not the old.
  EXPECT_EQ(r.intern(0, 110), a);
  EXPECT_NE(r.intern(0, 10), a);
}
