// The client's page-locked memory reaches the ucx transport's registration
// cache: what the application held before it first used ucx is registered
// then, later ranges as they come, each released when the application
// frees or unregisters it (the cache itself: ucx_transport_test.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "client/core/memory_map.hpp"
#include "client/core/transport_choice.hpp"
#include "transport/transport.hpp"

using namespace rgpu;

namespace {

transport::Transport::RegistrationCounts counts() { return transport::make_ucx_transport()->registration_counts(); }

uint64_t address(std::vector<uint8_t>& v) { return reinterpret_cast<uint64_t>(v.data()); }

}  // namespace

TEST(UcxPageLocked, ClientRangesAreRegisteredWithUcxUntilFreed) {
  std::vector<uint8_t> held_before(1 << 20), held_after(2 << 20), coherent(1 << 20);
  auto& map = client::MemoryMap::get();
  const auto start = counts();
  map.add_host({address(held_before), held_before.size(), 0, true, -1});
  EXPECT_EQ(counts().made, start.made);  // the client has not used ucx yet
  client::transport_named("ucx");
  EXPECT_EQ(counts().made, start.made + 1);
  map.add_host({address(held_after), held_after.size(), 0, false, -1});
  EXPECT_EQ(counts().made, start.made + 2);
  // Software-coherent mapped memory changes under rgpu: never kept registered.
  map.add_host({address(coherent), coherent.size(), 0, false, -1, true});
  EXPECT_EQ(counts().made, start.made + 2);
  map.remove_host(address(coherent));
  map.remove_host(address(held_before));
  EXPECT_EQ(counts().released, start.released + 1);
  map.remove_host(address(held_after));
  EXPECT_EQ(counts().released, start.released + 2);
  EXPECT_EQ(counts().made, start.made + 2);
}
