// NCCL calls of rgpu's libnccl.so.2: communicators, collectives and groups
// run by the backend's NCCL on this worker's GPUs. Every reply starts with
// the call's ncclResult_t; the worker refuses what the session may not do
// (another session's communicator, buffers outside its memory, a stream or
// datatype it does not have) with ncclInvalidArgument before NCCL sees it.
#include <nccl.h>

#include "protocol/nccl_wire.hpp"
#include "protocol/ops.hpp"
#include "protocol/wire.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

using proto::NcclCollectiveWire;
using proto::NcclKind;

using proto::kNcclTypeSizes;
static_assert(std::size(kNcclTypeSizes) == ncclNumTypes);
// Calls one group frame may carry.
constexpr uint32_t kMaxGroupCalls = 1u << 16;

int32_t refuse(SessionContext& s, const char* what) {
  s.warnings.warn("nccl", "NCCL call refused: %s", what);
  s.nccl_comms.note_refusal(std::string("rgpu worker refused the call: ") + what);
  return ncclInvalidArgument;
}

// NCCL is there (the cuda backend loads it at first use); else the reason
// is logged and the call fails as NCCL's own do when the system lacks something.
bool nccl_ready(SessionContext& s) {
  std::string why;
  if (s.backend().nccl().available(&why)) return true;
  s.warnings.warn("nccl unavailable", "%s", why.c_str());
  return false;
}

// A communicator NCCL made for the session, with its rank and size where
// NCCL knows them already.
void remember(SessionContext& s, uint64_t comm, int device) {
  if (!comm) return;
  NcclCommInfo info{device, 0, 0, {}, {}};
  if (s.backend().nccl().rank_and_size(comm, &info.rank, &info.nranks) != ncclSuccess) info.nranks = 0;
  s.nccl_comms.add(comm, std::move(info));
}

std::optional<NcclCommInfo> learn_size(SessionContext& s, uint64_t comm) {
  int rank = 0, nranks = 0;
  if (s.backend().nccl().rank_and_size(comm, &rank, &nranks) == ncclSuccess)
    s.nccl_comms.update(comm, [&](NcclCommInfo& c) {
      c.rank = rank, c.nranks = nranks;
      return true;
    });
  return s.nccl_comms.find(comm);
}

// ncclInvalidArgument (logged) unless the call is one this session may make.
int32_t check_collective(SessionContext& s, const NcclCollectiveWire& w) {
  if (w.kind >= NcclKind::count) return refuse(s, "unknown collective");
  auto comm = s.nccl_comms.find(w.comm);
  if (!comm) return refuse(s, "not a communicator of this session");
  // A non-blocking communicator knows its size only once its init is done.
  if (comm->nranks == 0) comm = learn_size(s, w.comm);
  if (comm->nranks == 0) return refuse(s, "a communicator whose init is not complete");
  if (w.datatype < 0 || w.datatype >= ncclNumTypes) return refuse(s, "unknown datatype");
  if (proto::nccl_reduces(w.kind) && !(w.op >= 0 && w.op < ncclNumOps) && !comm->ops.contains(w.op))
    return refuse(s, "unknown reduction op");
  if (proto::nccl_names_peer(w.kind) && (w.peer < 0 || w.peer >= comm->nranks))
    return refuse(s, "root or peer out of the communicator");
  if (w.count > proto::kNcclMaxCount) return refuse(s, "count out of range");
  if (!s.valid_stream(w.stream)) return refuse(s, "not a stream of this session");
  size_t send = 0, recv = 0;
  proto::nccl_buffer_bytes(w, comm->rank, comm->nranks, w.count * kNcclTypeSizes[w.datatype], &send, &recv);
  if (send && !s.owns(w.send, send)) return refuse(s, "send buffer outside the session's allocations");
  if (recv && !s.owns(w.recv, recv)) return refuse(s, "receive buffer outside the session's allocations");
  return ncclSuccess;
}

int32_t check_init(SessionContext& s, const proto::NcclInitWire& w) {
  if (!s.has_gpu(w.device)) return refuse(s, "a device the session does not have");
  if (w.nranks < 1 || w.rank < 0 || w.rank >= w.nranks) return refuse(s, "rank out of range");
  if (!s.nccl_comms.room_for_one_more()) return refuse(s, "too many communicators (max 4096 per session)");
  return ncclSuccess;
}

int32_t get_unique_id(SessionContext& s, Request& req, proto::Writer& out) {
  req.args.expect_end();
  proto::NcclUniqueIdWire id{};
  int32_t r = nccl_ready(s) ? s.backend().nccl().get_unique_id(&id) : ncclSystemError;
  out.put<int32_t>(r).put(id);
  return cudaSuccess;
}

int32_t comm_init_rank(SessionContext& s, Request& req, proto::Writer& out) {
  auto w = req.args.get<proto::NcclInitWire>();
  req.args.expect_end();
  uint64_t comm = 0;
  int32_t r = check_init(s, w);
  if (r == ncclSuccess && w.device != proto::header_ordinal(req.header().device)) r = refuse(s, "init on another device");
  if (r == ncclSuccess) r = nccl_ready(s) ? s.backend().nccl().init_rank(w, &comm) : ncclSystemError;
  remember(s, comm, w.device);
  out.put<int32_t>(r).put<uint64_t>(comm);
  return cudaSuccess;
}

int32_t comm_split(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  auto color = req.args.get<int32_t>();
  auto key = req.args.get<int32_t>();
  auto config = req.args.get<proto::NcclConfigWire>();
  req.args.expect_end();
  uint64_t made = 0;
  auto parent = s.nccl_comms.find(comm);
  int32_t r = !parent ? refuse(s, "not a communicator of this session")
              : !s.nccl_comms.room_for_one_more() ? refuse(s, "too many communicators (max 4096 per session)")
                                                  : s.backend().nccl().split(comm, color, key, config, &made);
  if (made) remember(s, made, parent->device);
  // The new communicator's rank and size, which the client answers from.
  auto info = s.nccl_comms.find(made);
  out.put<int32_t>(r).put<uint64_t>(made).put<int32_t>(info ? info->rank : 0).put<int32_t>(info ? info->nranks : 0);
  return cudaSuccess;
}

// Finalize, destroy, abort: the communicator, then the backend's call, in
// the background (nccl_table.hpp says why); what goes wrong there is logged.
enum class CommEnd { finalize, destroy, abort };

template <CommEnd End>
int32_t comm_end(SessionContext& s, Request& req, proto::Writer& out) {
  constexpr bool forget = End != CommEnd::finalize;
  constexpr const char* what = End == CommEnd::finalize ? "finalize" : End == CommEnd::destroy ? "destroy" : "abort";
  auto comm = req.args.get<uint64_t>();
  req.args.expect_end();
  bool known = forget ? s.nccl_comms.remove(comm) : s.nccl_comms.find(comm).has_value();
  if (!known) {
    out.put<int32_t>(refuse(s, "not a communicator of this session"));
    return cudaSuccess;
  }
  s.nccl_comms.end_in_background(comm, forget, what, [&nccl = s.backend().nccl(), comm] {
    if constexpr (End == CommEnd::finalize) return nccl.finalize(comm);
    else if constexpr (End == CommEnd::destroy) return nccl.destroy(comm);
    else return nccl.abort(comm);
  });
  out.put<int32_t>(ncclSuccess);
  return cudaSuccess;
}

int32_t comm_get_async_error(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  req.args.expect_end();
  int32_t error = ncclSuccess;
  auto info = s.nccl_comms.find(comm);
  int32_t r = info ? s.backend().nccl().async_error(comm, &error) : refuse(s, "not a communicator of this session");
  if (r == ncclSuccess && error == ncclSuccess) error = info->async_failure;
  out.put<int32_t>(r).put<int32_t>(error);
  return cudaSuccess;
}

int32_t get_last_error(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  req.args.expect_end();
  if (comm && !s.nccl_comms.find(comm)) comm = 0;
  std::string text = s.nccl_comms.take_refusal();
  if (text.empty() && nccl_ready(s)) text = s.backend().nccl().last_error(comm);
  out.put<int32_t>(ncclSuccess).put_string(text);
  return cudaSuccess;
}

int32_t collective(SessionContext& s, Request& req, proto::Writer& out) {
  auto w = req.args.get<NcclCollectiveWire>();
  req.args.expect_end();
  int32_t r = check_collective(s, w);
  if (r == ncclSuccess) r = s.backend().nccl().collective(w);
  // A posted call has no reply: its failure is the communicator's
  // asynchronous error, as NCCL reports what fails after a call returned.
  if (r != ncclSuccess && (req.header().flags & proto::kFlagAsync))
    s.nccl_comms.update(w.comm, [r](NcclCommInfo& c) {
      if (c.async_failure == ncclSuccess) c.async_failure = r;
      return true;
    });
  out.put<int32_t>(r);
  return cudaSuccess;
}

// One NCCL group of the application's: inits (possibly on several devices
// of this server) and collectives, completed together.
int32_t group(SessionContext& s, Request& req, proto::Writer& out) {
  // Counts are checked against the bytes the frame holds before anything is
  // allocated for them.
  auto n_inits = req.args.get<uint32_t>();
  if (n_inits > kMaxGroupCalls || n_inits * sizeof(proto::NcclInitWire) > req.args.remaining())
    throw proto::DecodeError("more NCCL inits than the group frame holds");
  std::vector<proto::NcclInitWire> inits(n_inits);
  for (auto& i : inits) i = req.args.get<proto::NcclInitWire>();
  auto n_calls = req.args.get<uint32_t>();
  if (n_calls > kMaxGroupCalls || n_calls * sizeof(NcclCollectiveWire) > req.args.remaining())
    throw proto::DecodeError("more NCCL calls than the group frame holds");
  std::vector<NcclCollectiveWire> calls(n_calls);
  for (auto& c : calls) c = req.args.get<NcclCollectiveWire>();
  req.args.expect_end();
  int32_t r = nccl_ready(s) ? ncclSuccess : ncclSystemError;
  for (const auto& i : inits)
    if (r == ncclSuccess) r = check_init(s, i);
  for (const auto& c : calls)
    if (r == ncclSuccess) r = check_collective(s, c);
  std::vector<uint64_t> comms(n_inits, 0);
  if (r == ncclSuccess) {
    r = s.backend().nccl().group(inits, &comms, calls);
    // Inits made their devices current; the next call expects the frame's.
    s.backend().set_device(proto::header_ordinal(req.header().device));
  }
  for (uint32_t i = 0; i < n_inits; ++i) remember(s, comms[i], inits[i].device);
  out.put<int32_t>(r).put<uint32_t>(n_inits);
  for (uint64_t c : comms) out.put<uint64_t>(c);
  return cudaSuccess;
}

int32_t red_op_create_pre_mul_sum(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  auto datatype = req.args.get<int32_t>();
  auto residence = req.args.get<int32_t>();
  auto scalar = req.args.get<uint64_t>();
  req.args.expect_end();
  int32_t op = 0;
  int32_t r = !s.nccl_comms.find(comm)                   ? refuse(s, "not a communicator of this session")
              : datatype < 0 || datatype >= ncclNumTypes ? refuse(s, "unknown datatype")
              : residence != ncclScalarDevice && residence != ncclScalarHostImmediate
                  ? refuse(s, "unknown scalar residence")
              : residence == ncclScalarDevice && !s.owns(scalar, kNcclTypeSizes[datatype])
                  ? refuse(s, "scalar outside the session's allocations")
                  : s.backend().nccl().red_op_create_pre_mul_sum(comm, datatype, residence, scalar, &op);
  if (r == ncclSuccess) s.nccl_comms.update(comm, [&](NcclCommInfo& c) { return c.ops.insert(op).second; });
  out.put<int32_t>(r).put<int32_t>(op);
  return cudaSuccess;
}

int32_t red_op_destroy(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  auto op = req.args.get<int32_t>();
  req.args.expect_end();
  bool known = s.nccl_comms.update(comm, [&](NcclCommInfo& c) { return c.ops.erase(op) != 0; });
  out.put<int32_t>(known ? s.backend().nccl().red_op_destroy(comm, op) : refuse(s, "not an op of the communicator"));
  return cudaSuccess;
}

int32_t comm_register(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  auto ptr = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  uint64_t handle = 0;
  int32_t r = !s.nccl_comms.find(comm) ? refuse(s, "not a communicator of this session")
              : !s.owns(ptr, size)     ? refuse(s, "registered range outside the session's allocations")
                                       : s.backend().nccl().comm_register(comm, ptr, size, &handle);
  if (r == ncclSuccess)
    s.nccl_comms.update(comm, [&](NcclCommInfo& c) { return c.registrations.insert(handle).second; });
  out.put<int32_t>(r).put<uint64_t>(handle);
  return cudaSuccess;
}

int32_t comm_deregister(SessionContext& s, Request& req, proto::Writer& out) {
  auto comm = req.args.get<uint64_t>();
  auto handle = req.args.get<uint64_t>();
  req.args.expect_end();
  bool known = s.nccl_comms.update(comm, [&](NcclCommInfo& c) { return c.registrations.erase(handle) != 0; });
  out.put<int32_t>(known ? s.backend().nccl().comm_deregister(comm, handle)
                         : refuse(s, "not a registration of the communicator"));
  return cudaSuccess;
}

}  // namespace

void register_nccl_handlers(Dispatcher& d) {
  d.add(proto::kOpNcclGetUniqueId, get_unique_id);
  d.add(proto::kOpNcclCommInitRank, comm_init_rank);
  d.add(proto::kOpNcclCommSplit, comm_split);
  d.add(proto::kOpNcclCommFinalize, comm_end<CommEnd::finalize>);
  d.add(proto::kOpNcclCommDestroy, comm_end<CommEnd::destroy>);
  d.add(proto::kOpNcclCommAbort, comm_end<CommEnd::abort>);
  d.add(proto::kOpNcclCommGetAsyncError, comm_get_async_error);
  d.add(proto::kOpNcclGetLastError, get_last_error);
  d.add(proto::kOpNcclCollective, collective);
  d.add(proto::kOpNcclGroup, group);
  d.add(proto::kOpNcclRedOpCreatePreMulSum, red_op_create_pre_mul_sum);
  d.add(proto::kOpNcclRedOpDestroy, red_op_destroy);
  d.add(proto::kOpNcclCommRegister, comm_register);
  d.add(proto::kOpNcclCommDeregister, comm_deregister);
}

}  // namespace rgpu::server
