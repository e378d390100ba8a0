// NCCL frames (ops 700-719) that a client gets wrong or makes up: malformed
// ones are refused as such (cudaErrorInvalidValue), well-formed ones naming
// what the session does not have get ncclInvalidArgument, and the worker
// and the daemon carry on.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstring>

#include "client/core/session.hpp"
#include "test_server.hpp"
#include "protocol/nccl_wire.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;

namespace {

class NcclFault : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    port_ = test::free_port();
    server_ = new test::ServerProcess(port_, {"--workers", "2"});
  }
  static void TearDownTestSuite() { delete server_; }

  // A call's transport status, and its NCCL result in *result.
  static int32_t nccl_call(client::Session& s, uint16_t op, const proto::Writer& w, int32_t* result,
                           std::vector<uint8_t>* reply) {
    int32_t e = s.call(op, 0, w.bytes(), {}, *reply);
    if (e == cudaSuccess) *result = proto::Reader(*reply).get<int32_t>();
    return e;
  }

  // A one-rank communicator of session s (needs no peer).
  static uint64_t one_rank_comm(client::Session& s) {
    std::vector<uint8_t> reply;
    int32_t result = -1;
    EXPECT_EQ(nccl_call(s, proto::kOpNcclGetUniqueId, {}, &result, &reply), cudaSuccess);
    EXPECT_EQ(result, ncclSuccess);
    proto::Reader r(reply);
    r.get<int32_t>();
    proto::NcclInitWire init{};
    init.id = r.get<proto::NcclUniqueIdWire>();
    init.nranks = 1;
    proto::Writer w;
    w.put(init);
    EXPECT_EQ(nccl_call(s, proto::kOpNcclCommInitRank, w, &result, &reply), cudaSuccess);
    EXPECT_EQ(result, ncclSuccess);
    proto::Reader c(reply);
    c.get<int32_t>();
    return c.get<uint64_t>();
  }

  static uint64_t allocate(client::Session& s, uint64_t bytes) {
    std::vector<uint8_t> reply;
    proto::Writer w;
    w.put<uint64_t>(bytes);
    EXPECT_EQ(s.call(proto::kOpMalloc, 0, w.bytes(), {}, reply), cudaSuccess);
    return proto::Reader(reply).get<uint64_t>();
  }

  static uint16_t port_;
  static test::ServerProcess* server_;
};

uint16_t NcclFault::port_;
test::ServerProcess* NcclFault::server_;

TEST_F(NcclFault, MalformedFramesAreRefusedAndTheSessionGoesOn) {
  auto s = test::open_session(port_, "tcp");
  ASSERT_TRUE(s);
  std::vector<uint8_t> reply;
  int32_t result = -1;
  uint8_t short_init[7] = {};
  EXPECT_EQ(s->call(proto::kOpNcclCommInitRank, 0, short_init, {}, reply), cudaErrorInvalidValue);
  proto::Writer trailing;
  trailing.put<uint64_t>(0).put<uint8_t>(1);
  EXPECT_EQ(s->call(proto::kOpNcclCommDestroy, 0, trailing.bytes(), {}, reply), cudaErrorInvalidValue);
  // A group claiming more calls than a frame may carry, or than it holds.
  proto::Writer huge;
  huge.put<uint32_t>(0xffffffffu);
  EXPECT_EQ(s->call(proto::kOpNcclGroup, 0, huge.bytes(), {}, reply), cudaErrorInvalidValue);
  proto::Writer short_group;
  short_group.put<uint32_t>(0).put<uint32_t>(3).put(proto::NcclCollectiveWire{});
  EXPECT_EQ(s->call(proto::kOpNcclGroup, 0, short_group.bytes(), {}, reply), cudaErrorInvalidValue);
  // Well-formed, but naming nothing the session has.
  proto::NcclCollectiveWire bogus{};
  bogus.comm = 0xdeadbeef;
  bogus.count = 4;
  proto::Writer w;
  w.put(bogus);
  EXPECT_EQ(nccl_call(*s, proto::kOpNcclCollective, w, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  proto::Writer unknown_kind;
  bogus.kind = static_cast<proto::NcclKind>(200);
  unknown_kind.put(bogus);
  EXPECT_EQ(nccl_call(*s, proto::kOpNcclCollective, unknown_kind, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  proto::NcclInitWire init{};
  init.nranks = 2;
  init.rank = 2;
  proto::Writer out_of_range;
  out_of_range.put(init);
  EXPECT_EQ(nccl_call(*s, proto::kOpNcclCommInitRank, out_of_range, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  // An id that is not one: refused at once, no wait for peers.
  init.rank = 0;
  std::memset(init.id.bytes, 0x5a, sizeof init.id.bytes);
  proto::Writer garbage_id;
  garbage_id.put(init);
  EXPECT_EQ(nccl_call(*s, proto::kOpNcclCommInitRank, garbage_id, &result, &reply), cudaSuccess);
  EXPECT_NE(result, ncclSuccess);
  EXPECT_EQ(test::synchronize(*s), cudaSuccess);
}

TEST_F(NcclFault, BuffersAndCommunicatorsAreTheSessions) {
  auto a = test::open_session(port_, "tcp");
  auto b = test::open_session(port_, "tcp");
  ASSERT_TRUE(a && b);
  uint64_t comm = one_rank_comm(*a);
  ASSERT_NE(comm, 0u);
  uint64_t buf = allocate(*a, 4096);
  proto::NcclCollectiveWire c{};
  c.kind = proto::NcclKind::all_reduce;
  c.datatype = ncclFloat32;
  c.op = ncclSum;
  c.comm = comm;
  c.send = c.recv = buf;
  c.count = 1024;
  std::vector<uint8_t> reply;
  int32_t result = -1;
  proto::Writer fits;
  fits.put(c);
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCollective, fits, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclSuccess);
  // Past the allocation, another session's communicator, a wild datatype.
  c.count = 1025;
  proto::Writer past;
  past.put(c);
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCollective, past, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  c.count = 16;
  proto::Writer other;
  other.put(c);
  EXPECT_EQ(nccl_call(*b, proto::kOpNcclCollective, other, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  proto::Writer abort_other;
  abort_other.put<uint64_t>(comm);
  EXPECT_EQ(nccl_call(*b, proto::kOpNcclCommAbort, abort_other, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  c.datatype = 99;
  proto::Writer wild;
  wild.put(c);
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCollective, wild, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  // The refusal's reason is the last error.
  proto::Writer last;
  last.put<uint64_t>(comm);
  ASSERT_EQ(nccl_call(*a, proto::kOpNcclGetLastError, last, &result, &reply), cudaSuccess);
  proto::Reader r(reply);
  r.get<int32_t>();
  EXPECT_NE(r.get_string().find("datatype"), std::string::npos);
  // Still a working communicator; destroyed once, then unknown.
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCollective, fits, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclSuccess);
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCommDestroy, last, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclSuccess);
  EXPECT_EQ(nccl_call(*a, proto::kOpNcclCommDestroy, last, &result, &reply), cudaSuccess);
  EXPECT_EQ(result, ncclInvalidArgument);
  EXPECT_EQ(test::synchronize(*a), cudaSuccess);
  EXPECT_EQ(test::synchronize(*b), cudaSuccess);
}

}  // namespace
