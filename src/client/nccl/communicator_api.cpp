// NCCL's communicator calls: unique ids and inits made by workers, and the
// communicator's life. A communicator lives on the worker of the device the
// application made it on; its rank, size and device are answered here.
#include <cstring>
#include <vector>

#include "client/nccl/aliases.hpp"
#include "client/nccl/bridge.hpp"
#include "client/nccl/communicators.hpp"
#include "client/nccl/config.hpp"
#include "client/nccl/errors.hpp"
#include "client/nccl/group.hpp"
#include "protocol/ops.hpp"

namespace rgpu::nccl {
namespace {

ncclResult_t current_device(int* device) {
  const client::FrontEndBridge* b = bridge();
  if (!b) return fail(ncclSystemError, "no rgpu client in this process");
  if (b->current_device(device) != 0) return fail(ncclUnhandledCudaError, "no current device");
  return ncclSuccess;
}

// The communicator, ready for calls on its worker; *out null otherwise
// (with the error to return).
ncclResult_t ready(ncclComm_t comm, ncclComm_t* out) {
  *out = find_comm(comm);
  if (!*out) return fail(ncclInvalidArgument, "%p is not a communicator", static_cast<void*>(comm));
  if ((*out)->pending) return fail(ncclInvalidUsage, "the communicator's group has not ended");
  if ((*out)->remote == 0) return fail(ncclInvalidUsage, "the communicator's init failed");
  return ncclSuccess;
}

ncclResult_t get_unique_id_on(int device, ncclUniqueId* id) {
  if (!id) return fail(ncclInvalidArgument, "null unique id");
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclGetUniqueId, device, proto::Writer{}, &buffer, &reply);
  if (r == ncclSuccess) std::memcpy(id, reply.get<proto::NcclUniqueIdWire>().bytes, sizeof *id);
  return r;
}

// ncclCommInitRank(Config) on the current device: in a group, at its end.
ncclResult_t init_rank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                       int device) {
  if (!out) return fail(ncclInvalidArgument, "null communicator pointer");
  *out = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks) return fail(ncclInvalidArgument, "rank %d of %d", rank, nranks);
  proto::NcclInitWire init{};
  if (!config_wire(config, &init.config)) return fail(ncclInvalidArgument, "the config was not made by NCCL_CONFIG_INITIALIZER");
  ncclComm_t comm = make_comm(device, rank, nranks);
  if (!comm) return ncclInvalidArgument;
  init.device = comm->ordinal;
  init.nranks = nranks;
  init.rank = rank;
  std::memcpy(init.id.bytes, &id, sizeof init.id.bytes);
  *out = comm;
  if (in_group()) {
    group_add_init(comm, init);
    return ncclSuccess;
  }
  proto::Writer args;
  args.put(init);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclCommInitRank, device, args, &buffer, &reply);
  if (reply.remaining() >= sizeof(uint64_t)) comm->remote = reply.get<uint64_t>();
  if (r != ncclSuccess && r != ncclInProgress) {
    forget_comm(comm);
    *out = nullptr;
  }
  return r;
}

// A call naming only a communicator, answering only a result.
ncclResult_t comm_call(uint16_t op, ncclComm_t comm) {
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  proto::Writer args;
  args.put<uint64_t>(comm->remote);
  return remote_call(op, comm->device, args, &buffer, &reply);
}

}  // namespace
}  // namespace rgpu::nccl

using namespace rgpu;
using namespace rgpu::nccl;

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (!version) return fail(ncclInvalidArgument, "null version");
  // The API this front-end implements (its nccl.h); the workers' NCCL may be newer.
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  int device = 0;
  if (ncclResult_t r = current_device(&device)) return r;
  return get_unique_id_on(device, id);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  int device = 0;
  if (ncclResult_t r = current_device(&device)) return r;
  return init_rank(comm, nranks, id, rank, nullptr, device);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  int device = 0;
  if (ncclResult_t r = current_device(&device)) return r;
  return init_rank(comm, nranks, id, rank, config, device);
}

// One id only (a single bootstrap root: NCCL's own equivalence); several
// roots are not forwarded.
ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int n_ids, ncclUniqueId* ids,
                                      ncclConfig_t* config) {
  if (n_ids != 1 || !ids)
    return fail(ncclInvalidUsage, "ncclCommInitRankScalable with %d unique ids: rgpu forwards one", n_ids);
  int device = 0;
  if (ncclResult_t r = current_device(&device)) return r;
  return init_rank(comm, nranks, ids[0], rank, config, device);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (!comms || ndev < 1) return fail(ncclInvalidArgument, "ncclCommInitAll of %d devices", ndev);
  const client::FrontEndBridge* b = bridge();
  int count = 0;
  if (!b || b->device_count(&count) != 0) return fail(ncclSystemError, "no rgpu client in this process");
  for (int i = 0; i < ndev; ++i)
    if ((devlist ? devlist[i] : i) < 0 || (devlist ? devlist[i] : i) >= count)
      return fail(ncclInvalidArgument, "device %d of ncclCommInitAll does not exist", devlist ? devlist[i] : i);
  ncclUniqueId id;
  if (ncclResult_t r = get_unique_id_on(devlist ? devlist[0] : 0, &id)) return r;
  // The ranks may sit on several servers: one group sends all inits out
  // before waiting for any.
  group_start();
  ncclResult_t r = ncclSuccess;
  for (int i = 0; i < ndev && r == ncclSuccess; ++i) r = init_rank(&comms[i], ndev, id, i, nullptr, devlist ? devlist[i] : i);
  ncclResult_t end = group_end();
  return r != ncclSuccess ? r : end;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  ncclComm_t c;
  if (ncclResult_t r = ready(comm, &c)) return r;
  if (!newcomm) return fail(ncclInvalidArgument, "null new communicator pointer");
  *newcomm = nullptr;
  proto::NcclConfigWire wire;
  if (!config_wire(config, &wire)) return fail(ncclInvalidArgument, "the config was not made by NCCL_CONFIG_INITIALIZER");
  proto::Writer args;
  args.put<uint64_t>(c->remote).put<int32_t>(color).put<int32_t>(key).put(wire);
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  ncclResult_t r = remote_call(proto::kOpNcclCommSplit, c->device, args, &buffer, &reply);
  if (r != ncclSuccess && r != ncclInProgress) return r;
  auto remote = reply.get<uint64_t>();
  auto rank = reply.get<int32_t>();
  auto nranks = reply.get<int32_t>();
  if (remote == 0) return r;  // NCCL_SPLIT_NOCOLOR
  ncclComm_t made = make_comm(c->device, rank, nranks);
  if (!made) return ncclInternalError;
  made->remote = remote;
  *newcomm = made;
  return r;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  ncclComm_t c;
  if (ncclResult_t r = ready(comm, &c)) return r;
  return comm_call(rgpu::proto::kOpNcclCommFinalize, c);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  ncclComm_t c;
  ncclResult_t r = ready(comm, &c);
  if (r == ncclSuccess) r = comm_call(rgpu::proto::kOpNcclCommDestroy, c);
  if (find_comm(comm)) forget_comm(comm);
  return r;
}

// Always ends the application's communicator, whatever became of its
// worker (a lost server's communicators are gone with it).
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  if (!find_comm(comm)) return fail(ncclInvalidArgument, "%p is not a communicator", static_cast<void*>(comm));
  if (comm->remote) comm_call(rgpu::proto::kOpNcclCommAbort, comm);
  forget_comm(comm);
  return ncclSuccess;
}

// A lost server is the communicator's asynchronous error (ncclSystemError),
// as a dead peer is NCCL's (ncclRemoteError).
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (!async_error) return fail(ncclInvalidArgument, "null error pointer");
  ncclComm_t c = find_comm(comm);
  if (!c) return fail(ncclInvalidArgument, "%p is not a communicator", static_cast<void*>(comm));
  if (c->pending || c->remote == 0) {
    *async_error = c->pending ? ncclInProgress : ncclInvalidUsage;
    return ncclSuccess;
  }
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  proto::Writer args;
  args.put<uint64_t>(c->remote);
  ncclResult_t r = remote_call(rgpu::proto::kOpNcclCommGetAsyncError, c->device, args, &buffer, &reply);
  if (r == ncclSystemError && reply.remaining() == 0) {
    *async_error = ncclSystemError;
    return ncclSuccess;
  }
  if (r == ncclSuccess) *async_error = static_cast<ncclResult_t>(reply.get<int32_t>());
  return r;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  ncclComm_t c = find_comm(comm);
  if (!c || !count) return fail(ncclInvalidArgument, "ncclCommCount of %p", static_cast<void*>(comm));
  *count = c->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  ncclComm_t c = find_comm(comm);
  if (!c || !device) return fail(ncclInvalidArgument, "ncclCommCuDevice of %p", static_cast<void*>(comm));
  *device = c->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  ncclComm_t c = find_comm(comm);
  if (!c || !rank) return fail(ncclInvalidArgument, "ncclCommUserRank of %p", static_cast<void*>(comm));
  *rank = c->rank;
  return ncclSuccess;
}

const char* ncclGetLastError(ncclComm_t comm) {
  thread_local std::string text;
  ncclComm_t c = find_comm(comm);
  if (!c || c->remote == 0) {
    text = last_front_end_error();
    return text.c_str();
  }
  std::vector<uint8_t> buffer;
  proto::Reader reply;
  proto::Writer args;
  args.put<uint64_t>(c->remote);
  text = remote_call(rgpu::proto::kOpNcclGetLastError, c->device, args, &buffer, &reply) == ncclSuccess
             ? reply.get_string()
             : last_front_end_error();
  return text.c_str();
}

}  // extern "C"


RGPU_NCCL_ALIAS(ncclGetVersion)
RGPU_NCCL_ALIAS(ncclGetUniqueId)
RGPU_NCCL_ALIAS(ncclCommInitRank)
RGPU_NCCL_ALIAS(ncclCommInitRankConfig)
RGPU_NCCL_ALIAS(ncclCommInitAll)
RGPU_NCCL_ALIAS(ncclCommInitRankScalable)
RGPU_NCCL_ALIAS(ncclCommSplit)
RGPU_NCCL_ALIAS(ncclCommFinalize)
RGPU_NCCL_ALIAS(ncclCommDestroy)
RGPU_NCCL_ALIAS(ncclCommAbort)
RGPU_NCCL_ALIAS(ncclCommGetAsyncError)
RGPU_NCCL_ALIAS(ncclCommCount)
RGPU_NCCL_ALIAS(ncclCommCuDevice)
RGPU_NCCL_ALIAS(ncclCommUserRank)
RGPU_NCCL_ALIAS(ncclGetLastError)
