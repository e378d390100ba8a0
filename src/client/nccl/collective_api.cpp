// NCCL's collectives, point-to-point calls and groups. Each is enqueued on
// the communicator's worker, on the worker's handle of the application's
// stream, in order with the stream's other work. A call whose arguments are
// plainly right here (known type and op, buffers inside allocations the
// client knows) is posted: it returns at once, and what fails on the worker
// becomes the communicator's asynchronous error, as NCCL reports failures
// after a call. Any other waits for the worker's verdict (one round trip).
// Inside a group, calls wait for the group's end (group.hpp).
#include <cuda_runtime_api.h>

#include <vector>

#include "client/nccl/aliases.hpp"
#include "client/nccl/bridge.hpp"
#include "client/nccl/communicators.hpp"
#include "client/nccl/errors.hpp"
#include "client/nccl/group.hpp"
#include "protocol/nccl_wire.hpp"
#include "protocol/ops.hpp"

namespace rgpu::nccl {
namespace {

using proto::NcclKind;

// Whether the worker will surely take the call, so that nothing need wait
// for its answer: what it checks, checked here first.
bool may_post(const client::FrontEndBridge& b, const ncclComm& c, const proto::NcclCollectiveWire& w) {
  if (w.datatype < 0 || w.datatype >= ncclNumTypes || w.count > proto::kNcclMaxCount || c.nranks < 1) return false;
  if (proto::nccl_reduces(w.kind) && !(w.op >= 0 && w.op < ncclNumOps)) return false;
  if (proto::nccl_names_peer(w.kind) && (w.peer < 0 || w.peer >= c.nranks)) return false;
  size_t send = 0, recv = 0;
  proto::nccl_buffer_bytes(w, c.rank, c.nranks, w.count * proto::kNcclTypeSizes[w.datatype], &send, &recv);
  return (!send || b.device_memory(c.device, w.send, send) == 0) && (!recv || b.device_memory(c.device, w.recv, recv) == 0);
}

ncclResult_t enqueue(NcclKind kind, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                     int peer, ncclComm_t comm, cudaStream_t stream) {
  ncclComm_t c = find_comm(comm);
  if (!c) return fail(ncclInvalidArgument, "%p is not a communicator", static_cast<void*>(comm));
  if (!c->pending && c->remote == 0) return fail(ncclInvalidUsage, "the communicator's init failed");
  if (c->pending) return fail(ncclInvalidUsage, "a call on a communicator whose init is in the same open group");
  const client::FrontEndBridge* b = bridge();
  int device = -1;
  uint64_t remote_stream = 0;
  if (!b || b->stream(stream, &device, &remote_stream) != 0)
    return fail(ncclInvalidArgument, "%p is not a stream", static_cast<void*>(stream));
  // A default stream is the communicator's device's (its handle is the same
  // special value on every server); any other must be of that device.
  bool default_stream = remote_stream <= reinterpret_cast<uint64_t>(cudaStreamPerThread);
  if (!default_stream && device != c->device)
    return fail(ncclInvalidArgument, "the stream is of device %d, the communicator of device %d", device, c->device);
  proto::NcclCollectiveWire w{};
  w.kind = kind;
  w.datatype = type;
  w.op = op;
  w.peer = peer;
  w.comm = c->remote;
  w.send = reinterpret_cast<uint64_t>(send);
  w.recv = reinterpret_cast<uint64_t>(recv);
  w.count = count;
  w.stream = remote_stream;
  if (in_group()) {
    group_add_call(c, w);
    return ncclSuccess;
  }
  proto::Writer args;
  args.put(w);
  if (may_post(*b, *c, w)) return remote_post(proto::kOpNcclCollective, c->device, args);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  return remote_call(proto::kOpNcclCollective, c->device, args, &buffer, &reply);
}

}  // namespace
}  // namespace rgpu::nccl

using rgpu::proto::NcclKind;
using rgpu::nccl::enqueue;

extern "C" {

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return enqueue(NcclKind::all_reduce, send, recv, count, type, op, 0, comm, stream);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return enqueue(NcclKind::broadcast, send, recv, count, type, ncclSum, root, comm, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(NcclKind::broadcast, buff, buff, count, type, ncclSum, root, comm, stream);
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return enqueue(NcclKind::reduce, send, recv, count, type, op, root, comm, stream);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  return enqueue(NcclKind::all_gather, send, recv, count, type, ncclSum, 0, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  return enqueue(NcclKind::reduce_scatter, send, recv, count, type, op, 0, comm, stream);
}

ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                          cudaStream_t stream) {
  return enqueue(NcclKind::all_to_all, send, recv, count, type, ncclSum, 0, comm, stream);
}

ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  return enqueue(NcclKind::gather, send, recv, count, type, ncclSum, root, comm, stream);
}

ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  return enqueue(NcclKind::scatter, send, recv, count, type, ncclSum, root, comm, stream);
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue(NcclKind::send, send, nullptr, count, type, ncclSum, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(NcclKind::recv, nullptr, recv, count, type, ncclSum, peer, comm, stream);
}

ncclResult_t ncclGroupStart() {
  rgpu::nccl::group_start();
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() { return rgpu::nccl::group_end(); }

}  // extern "C"


RGPU_NCCL_ALIAS(ncclAllReduce)
RGPU_NCCL_ALIAS(ncclBroadcast)
RGPU_NCCL_ALIAS(ncclBcast)
RGPU_NCCL_ALIAS(ncclReduce)
RGPU_NCCL_ALIAS(ncclAllGather)
RGPU_NCCL_ALIAS(ncclReduceScatter)
RGPU_NCCL_ALIAS(ncclAlltoAll)
RGPU_NCCL_ALIAS(ncclGather)
RGPU_NCCL_ALIAS(ncclScatter)
RGPU_NCCL_ALIAS(ncclSend)
RGPU_NCCL_ALIAS(ncclRecv)
RGPU_NCCL_ALIAS(ncclGroupStart)
RGPU_NCCL_ALIAS(ncclGroupEnd)
