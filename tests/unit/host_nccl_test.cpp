// The host-test NCCL stand-in's arithmetic and its communicators in one
// process: ranks on threads meeting through a unique id, as workers of
// several servers do.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstring>
#include <thread>
#include <vector>

#include "server/backend/host/host_nccl.hpp"
#include "server/backend/host/host_nccl_reduce.hpp"

using namespace rgpu;

namespace {

// float16 1.0 scaled by v: v rounded to float16 by the stand-in.
uint16_t half_bits(float v) {
  uint16_t h = 0x3c00;
  server::host_nccl_scale(&h, 1, ncclFloat16, v);
  return h;
}

}  // namespace

TEST(HostNcclReduce, TypesOpsAndRounding) {
  EXPECT_EQ(server::host_nccl_type_size(ncclFloat16), 2u);
  EXPECT_EQ(server::host_nccl_type_size(ncclFloat64), 8u);
  EXPECT_EQ(server::host_nccl_type_size(ncclFloat8e4m3), 0u);  // refused by the stand-in
  int32_t a[3] = {5, -2, 7}, b[3] = {3, 4, -9};
  server::host_nccl_reduce(a, b, 3, ncclInt32, ncclMax);
  EXPECT_EQ(a[0], 5);
  EXPECT_EQ(a[1], 4);
  server::host_nccl_reduce(a, b, 3, ncclInt32, ncclProd);
  EXPECT_EQ(a[0], 15);
  EXPECT_EQ(a[2], -63);
  // float16: 1.0 * 2.5 = 2.5 (0x4100), 1/3 rounds to 0x3555, 65504 is the largest.
  EXPECT_EQ(half_bits(2.5f), 0x4100);
  EXPECT_EQ(half_bits(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(half_bits(1e6f), 0x7c00);  // infinity
  uint16_t bf[2] = {0x3f80, 0x4000};   // bfloat16 1.0, 2.0
  uint16_t bf_in[2] = {0x3f80, 0x3f80};
  server::host_nccl_reduce(bf, bf_in, 2, ncclBfloat16, ncclSum);
  EXPECT_EQ(bf[0], 0x4000);  // 2.0
  EXPECT_EQ(bf[1], 0x4040);  // 3.0
  uint64_t avg[1] = {7};
  server::host_nccl_scale(avg, 1, ncclUint64, 0.5);
  EXPECT_EQ(avg[0], 3u);  // integer averages truncate, as NCCL's do
}

TEST(HostNccl, ThreeRanksAllReduceAndAllGather) {
  server::HostNccl nccl;
  proto::NcclInitWire init{};
  ASSERT_EQ(nccl.get_unique_id(&init.id), ncclSuccess);
  init.nranks = 3;
  std::vector<uint64_t> comms(3);
  std::vector<std::vector<double>> data(3, std::vector<double>(4));
  std::vector<std::vector<double>> gathered(3, std::vector<double>(12));
  std::vector<int32_t> results(3, -1);
  {
    std::vector<std::jthread> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.emplace_back([&, r] {
        proto::NcclInitWire mine = init;
        mine.rank = r;
        if ((results[r] = nccl.init_rank(mine, &comms[r])) != ncclSuccess) return;
        for (int i = 0; i < 4; ++i) data[r][i] = r * 10 + i;
        proto::NcclCollectiveWire w{};
        w.kind = proto::NcclKind::all_gather;
        w.datatype = ncclFloat64;
        w.comm = comms[r];
        w.send = reinterpret_cast<uint64_t>(data[r].data());
        w.recv = reinterpret_cast<uint64_t>(gathered[r].data());
        w.count = 4;
        if ((results[r] = nccl.collective(w)) != ncclSuccess) return;
        w.kind = proto::NcclKind::all_reduce;
        w.op = ncclAvg;
        w.recv = w.send;
        results[r] = nccl.collective(w);
      });
  }
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(results[r], ncclSuccess) << r;
    EXPECT_EQ(gathered[r][4 + 1], 11.0);
    EXPECT_EQ(gathered[r][8 + 3], 23.0);
    EXPECT_DOUBLE_EQ(data[r][2], (2 + 12 + 22) / 3.0);
    int rank = -1, size = 0;
    EXPECT_EQ(nccl.rank_and_size(comms[r], &rank, &size), ncclSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, 3);
  }
  // Ends are collective, as NVIDIA's are: every rank destroys at once.
  std::vector<std::jthread> ends;
  for (int r = 0; r < 3; ++r) ends.emplace_back([&, r] { EXPECT_EQ(nccl.destroy(comms[r]), ncclSuccess); });
}
