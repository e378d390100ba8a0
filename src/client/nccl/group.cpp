#include "client/nccl/group.hpp"

#include <map>
#include <thread>
#include <vector>

#include "client/nccl/bridge.hpp"
#include "client/nccl/communicators.hpp"
#include "client/nccl/errors.hpp"
#include "protocol/ops.hpp"

namespace rgpu::nccl {
namespace {

// One server's share of a group.
struct Batch {
  int device = -1;  // a device of that server, which the frame goes to
  std::vector<ncclComm_t> init_comms;
  std::vector<proto::NcclInitWire> inits;
  std::vector<proto::NcclCollectiveWire> calls;
};

struct Group {
  int depth = 0;
  std::map<const void*, Batch> batches;  // by server
};

thread_local Group t_group;

Batch& batch_of(ncclComm_t comm) {
  Batch& b = t_group.batches[comm->server];
  if (b.device < 0) b.device = comm->device;
  return b;
}

ncclResult_t run_batch(Batch& b) {
  proto::Writer args;
  args.put<uint32_t>(static_cast<uint32_t>(b.inits.size()));
  for (const auto& i : b.inits) args.put(i);
  args.put<uint32_t>(static_cast<uint32_t>(b.calls.size()));
  for (const auto& c : b.calls) args.put(c);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclGroup, b.device, args, &buffer, &reply);
  bool answered = r != ncclSystemError && r != ncclInternalError && reply.remaining() >= sizeof(uint32_t);
  uint32_t n = answered ? reply.get<uint32_t>() : 0;
  for (uint32_t i = 0; i < n && i < b.init_comms.size() && reply.remaining() >= sizeof(uint64_t); ++i) {
    b.init_comms[i]->remote = reply.get<uint64_t>();
    b.init_comms[i]->pending = false;
  }
  return r;
}

}  // namespace

bool in_group() { return t_group.depth > 0; }

void group_start() { ++t_group.depth; }

ncclResult_t group_end() {
  if (t_group.depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_group.depth > 0) return ncclSuccess;
  std::map<const void*, Batch> batches;
  batches.swap(t_group.batches);
  std::vector<ncclResult_t> results(batches.size(), ncclSuccess);
  {
    // Every server's share on its way before any is waited for.
    std::vector<std::jthread> others;
    size_t i = 0;
    for (auto& [server, batch] : batches) {
      if (i > 0) others.emplace_back([&results, &b = batch, i] { results[i] = run_batch(b); });
      ++i;
    }
    if (!batches.empty()) results[0] = run_batch(batches.begin()->second);
  }
  for (ncclResult_t r : results)
    if (r != ncclSuccess && r != ncclInProgress) return r;
  for (ncclResult_t r : results)
    if (r == ncclInProgress) return r;
  return ncclSuccess;
}

void group_add_init(ncclComm_t comm, const proto::NcclInitWire& init) {
  Batch& b = batch_of(comm);
  comm->pending = true;
  b.init_comms.push_back(comm);
  b.inits.push_back(init);
}

void group_add_call(ncclComm_t comm, const proto::NcclCollectiveWire& call) { batch_of(comm).calls.push_back(call); }

}  // namespace rgpu::nccl
