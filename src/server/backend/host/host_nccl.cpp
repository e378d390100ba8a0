#include "server/backend/host/host_nccl.hpp"

#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <thread>

#include "common/log.hpp"
#include "server/backend/host/host_nccl_mesh.hpp"
#include "server/backend/host/host_nccl_reduce.hpp"

namespace rgpu::server {
namespace {

using proto::NcclCollectiveWire;
using proto::NcclKind;

struct HostComm {
  HostNcclMesh mesh;
  std::mutex busy;  // one collective at a time
  std::atomic<int32_t> error{ncclSuccess};
  std::mutex mutex;  // guards what follows
  std::string last_error;
  std::map<int32_t, double> pre_mul_sums;  // op -> its scalar
  int32_t next_op = ncclNumOps;
  bool finalized = false;  // under busy
};

HostComm* as_comm(uint64_t h) { return reinterpret_cast<HostComm*>(h); }

// What one rank sends to and receives from each peer.
struct Transfer {
  const void* send = nullptr;
  size_t send_n = 0;
  void* recv = nullptr;
  size_t recv_n = 0;
};

bool exchange_all(HostComm& c, std::vector<Transfer>& t, std::string* why) {
  for (int peer = 0; peer < c.mesh.nranks(); ++peer)
    if (peer != c.mesh.rank() && !c.mesh.exchange(peer, t[peer].send, t[peer].send_n, t[peer].recv, t[peer].recv_n, why))
      return false;
  return true;
}

std::vector<uint8_t> snapshot(uint64_t p, size_t n) {
  auto* b = reinterpret_cast<const uint8_t*>(p);
  return {b, b + n};
}

// A collective of one communicator, run at once.
class Run {
 public:
  Run(HostComm& c, const NcclCollectiveWire& w, size_t type_size)
      : c_(c), w_(w), n_(c.mesh.nranks()), r_(c.mesh.rank()), type_size_(type_size), bytes_(w.count * type_size),
        t_(n_) {}

  // false: *why (a peer is gone).
  bool go(std::string* why) {
    auto* recv = reinterpret_cast<uint8_t*>(w_.recv);
    int root = w_.peer;
    switch (w_.kind) {
      case NcclKind::all_reduce:
      case NcclKind::reduce: {
        bool all = w_.kind == NcclKind::all_reduce;
        contribution(bytes_);
        for (int p = 0; p < n_; ++p) {
          if (all || p == root) t_[p].send = own_.data(), t_[p].send_n = bytes_;
          if (all || r_ == root) receive_into_in(p, bytes_);
        }
        if (!exchange_all(c_, t_, why)) return false;
        if (all || r_ == root) combine(recv, own_.data());
        return true;
      }
      case NcclKind::reduce_scatter: {
        contribution(bytes_ * n_);
        for (int p = 0; p < n_; ++p) {
          t_[p].send = own_.data() + p * bytes_, t_[p].send_n = bytes_;
          receive_into_in(p, bytes_);
        }
        if (!exchange_all(c_, t_, why)) return false;
        combine(recv, own_.data() + r_ * bytes_);
        return true;
      }
      case NcclKind::broadcast:
        if (r_ == root) {
          own_ = snapshot(w_.send, bytes_);
          for (auto& t : t_) t.send = own_.data(), t.send_n = bytes_;
          std::memcpy(recv, own_.data(), bytes_);
        } else {
          t_[root].recv = recv, t_[root].recv_n = bytes_;
        }
        return exchange_all(c_, t_, why);
      case NcclKind::all_gather:
      case NcclKind::gather:
        own_ = snapshot(w_.send, bytes_);
        for (int p = 0; p < n_; ++p) {
          bool gathers = w_.kind == NcclKind::all_gather || r_ == root;
          if (w_.kind == NcclKind::all_gather || p == root) t_[p].send = own_.data(), t_[p].send_n = bytes_;
          if (gathers) t_[p].recv = recv + p * bytes_, t_[p].recv_n = bytes_;
        }
        if (w_.kind == NcclKind::all_gather || r_ == root) std::memcpy(recv + r_ * bytes_, own_.data(), bytes_);
        return exchange_all(c_, t_, why);
      case NcclKind::all_to_all:
        own_ = snapshot(w_.send, bytes_ * n_);
        for (int p = 0; p < n_; ++p) {
          t_[p].send = own_.data() + p * bytes_, t_[p].send_n = bytes_;
          t_[p].recv = recv + p * bytes_, t_[p].recv_n = bytes_;
        }
        std::memcpy(recv + r_ * bytes_, own_.data() + r_ * bytes_, bytes_);
        return exchange_all(c_, t_, why);
      case NcclKind::scatter:
        if (r_ == root) {
          own_ = snapshot(w_.send, bytes_ * n_);
          for (int p = 0; p < n_; ++p) t_[p].send = own_.data() + p * bytes_, t_[p].send_n = bytes_;
          std::memcpy(recv, own_.data() + r_ * bytes_, bytes_);
        } else {
          t_[root].recv = recv, t_[root].recv_n = bytes_;
        }
        return exchange_all(c_, t_, why);
      default:
        return false;  // send and recv go through P2pBatch
    }
  }

 private:
  // This rank's input, pre-multiplied by its ncclRedOpCreatePreMulSum scalar.
  void contribution(size_t n) {
    own_ = snapshot(w_.send, n);
    std::lock_guard lock(c_.mutex);
    auto it = c_.pre_mul_sums.find(w_.op);
    if (it != c_.pre_mul_sums.end()) host_nccl_scale(own_.data(), n / type_size_, w_.datatype, it->second);
  }
  void receive_into_in(int p, size_t n) {
    in_.resize(n_);
    if (p == r_) return;
    in_[p].resize(n);
    t_[p].recv = in_[p].data(), t_[p].recv_n = n;
  }
  // dst = in[0] op in[1] op ... in rank order (the same on every rank).
  void combine(uint8_t* dst, const uint8_t* own) {
    std::memcpy(dst, r_ == 0 ? own : in_[0].data(), bytes_);
    for (int p = 1; p < n_; ++p) host_nccl_reduce(dst, p == r_ ? own : in_[p].data(), w_.count, w_.datatype, w_.op);
    if (w_.op == ncclAvg) host_nccl_scale(dst, w_.count, w_.datatype, 1.0 / n_);
  }

  HostComm& c_;
  const NcclCollectiveWire& w_;
  int n_, r_;
  size_t type_size_, bytes_;
  std::vector<Transfer> t_;
  std::vector<uint8_t> own_;
  std::vector<std::vector<uint8_t>> in_;
};

// A group's sends and receives of one communicator, matched per peer: all
// that goes to a peer travels in one exchange, in call order.
bool run_p2p(HostComm& c, std::span<const NcclCollectiveWire* const> ops, std::span<const size_t> bytes,
             std::string* why) {
  int n = c.mesh.nranks();
  std::vector<std::vector<uint8_t>> out(n), in(n);
  for (size_t i = 0; i < ops.size(); ++i) {
    auto& v = ops[i]->kind == NcclKind::send ? out[ops[i]->peer] : in[ops[i]->peer];
    size_t at = v.size();
    v.resize(at + bytes[i]);
    if (ops[i]->kind == NcclKind::send) std::memcpy(v.data() + at, reinterpret_cast<const void*>(ops[i]->send), bytes[i]);
  }
  if (in[c.mesh.rank()].size() != out[c.mesh.rank()].size()) {
    *why = "sends to itself and receives from itself differ in size";
    return false;
  }
  in[c.mesh.rank()] = out[c.mesh.rank()];
  std::vector<Transfer> t(n);
  for (int p = 0; p < n; ++p) t[p] = {out[p].data(), out[p].size(), in[p].data(), in[p].size()};
  if (!exchange_all(c, t, why)) return false;
  std::vector<size_t> taken(n);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i]->kind == NcclKind::recv) {
      std::memcpy(reinterpret_cast<void*>(ops[i]->recv), in[ops[i]->peer].data() + taken[ops[i]->peer], bytes[i]);
      taken[ops[i]->peer] += bytes[i];
    }
  return true;
}

}  // namespace

int32_t HostNccl::fail(int32_t result, const std::string& why) {
  RGPU_LOG(warn, "host-test NCCL: %s", why.c_str());
  std::lock_guard lock(mutex_);
  last_error_ = why;
  return result;
}

int32_t HostNccl::get_unique_id(proto::NcclUniqueIdWire* id) {
  std::string why;
  return host_nccl_make_id(id, &why) ? ncclSuccess : fail(ncclSystemError, why);
}

int32_t HostNccl::init_rank(const proto::NcclInitWire& init, uint64_t* comm) {
  auto c = std::make_unique<HostComm>();
  std::string why;
  if (!HostNcclMesh::join(init.id, init.nranks, init.rank, &c->mesh, &why)) return fail(ncclInvalidUsage, why);
  *comm = reinterpret_cast<uint64_t>(c.release());
  return ncclSuccess;
}

int32_t HostNccl::split(uint64_t comm, int32_t color, int32_t key, const proto::NcclConfigWire& config,
                        uint64_t* out) {
  HostComm& c = *as_comm(comm);
  std::lock_guard busy(c.busy);
  int n = c.mesh.nranks(), r = c.mesh.rank();
  // Everyone's (color, key); the lowest rank of each color makes its id and
  // hands it to the others of that color.
  std::vector<std::pair<int32_t, int32_t>> all(n);
  all[r] = {color, key};
  std::vector<Transfer> t(n);
  for (int p = 0; p < n; ++p)
    if (p != r) t[p] = {&all[r], sizeof all[r], &all[p], sizeof all[p]};
  std::string why;
  if (!exchange_all(c, t, &why)) return fail(ncclRemoteError, why);
  std::vector<int> members;
  for (int p = 0; p < n; ++p)
    if (color != NCCL_SPLIT_NOCOLOR && all[p].first == color) members.push_back(p);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[a].second < all[b].second; });
  auto leader_of = [&](int p) {
    int leader = p;
    for (int q = 0; q < n; ++q)
      if (all[q].first == all[p].first) leader = std::min(leader, q);
    return leader;
  };
  proto::NcclInitWire init{};
  init.config = config;
  if (color != NCCL_SPLIT_NOCOLOR && leader_of(r) == r && !host_nccl_make_id(&init.id, &why))
    return fail(ncclSystemError, why);
  std::vector<Transfer> ids(n);
  for (int p = 0; p < n; ++p) {
    if (p == r || all[p].first == NCCL_SPLIT_NOCOLOR || color == NCCL_SPLIT_NOCOLOR || all[p].first != color) continue;
    if (leader_of(r) == r) ids[p].send = &init.id, ids[p].send_n = sizeof init.id;
    if (leader_of(r) == p) ids[p].recv = &init.id, ids[p].recv_n = sizeof init.id;
  }
  if (!exchange_all(c, ids, &why)) return fail(ncclRemoteError, why);
  *out = 0;
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  init.nranks = static_cast<int32_t>(members.size());
  init.rank = static_cast<int32_t>(std::find(members.begin(), members.end(), r) - members.begin());
  return init_rank(init, out);
}

int32_t HostNccl::rank_and_size(uint64_t comm, int* rank, int* nranks) {
  *rank = as_comm(comm)->mesh.rank();
  *nranks = as_comm(comm)->mesh.nranks();
  return ncclSuccess;
}

namespace {

// NVIDIA's NCCL ends a communicator collectively: finalize (or a destroy
// without one) waits for every rank's. The stand-in does the same, so that
// tests meet what a GPU's NCCL would do.
bool finish_together(HostComm& c, std::string* why) {
  if (c.finalized) return true;
  c.finalized = true;
  std::vector<Transfer> t(c.mesh.nranks());
  std::vector<uint8_t> heard(t.size());
  static const uint8_t kDone = 1;
  for (size_t p = 0; p < t.size(); ++p) t[p] = {&kDone, 1, &heard[p], 1};
  return exchange_all(c, t, why);
}

}  // namespace

int32_t HostNccl::finalize(uint64_t comm) {
  HostComm* c = as_comm(comm);
  std::lock_guard busy(c->busy);
  std::string why;
  if (!finish_together(*c, &why)) return fail(ncclRemoteError, why);
  return ncclSuccess;
}

int32_t HostNccl::destroy(uint64_t comm) {
  HostComm* c = as_comm(comm);
  {
    std::lock_guard busy(c->busy);
    std::string why;
    // Peers gone by now cannot keep this rank's resources.
    if (!finish_together(*c, &why)) RGPU_LOG(debug, "NCCL destroy without every peer: %s", why.c_str());
  }
  delete c;
  return ncclSuccess;
}

int32_t HostNccl::abort(uint64_t comm) {
  HostComm* c = as_comm(comm);
  c->mesh.shut();
  { std::lock_guard busy(c->busy); }
  delete c;
  return ncclSuccess;
}

int32_t HostNccl::async_error(uint64_t comm, int32_t* error) {
  *error = as_comm(comm)->error.load();
  return ncclSuccess;
}

std::string HostNccl::last_error(uint64_t comm) {
  if (comm) {
    HostComm& c = *as_comm(comm);
    std::lock_guard lock(c.mutex);
    if (!c.last_error.empty()) return c.last_error;
  }
  std::lock_guard lock(mutex_);
  return last_error_;
}

int32_t HostNccl::collective(const NcclCollectiveWire& w) { return group({}, nullptr, {&w, 1}); }

int32_t HostNccl::group(std::span<const proto::NcclInitWire> inits, std::vector<uint64_t>* comms,
                        std::span<const NcclCollectiveWire> collectives) {
  // Each init blocks until its communicator's ranks join, which may be in
  // this group too: all at once.
  std::vector<int32_t> results(inits.size());
  if (comms) comms->assign(inits.size(), 0);
  {
    std::vector<std::jthread> threads;
    for (size_t i = 0; i < inits.size(); ++i)
      threads.emplace_back([&, i] { results[i] = init_rank(inits[i], &(*comms)[i]); });
  }
  for (int32_t r : results)
    if (r != ncclSuccess) return r;
  // Each communicator's calls in order on a thread of its own (a group may
  // hold two ranks of one communicator); sends and receives last, matched.
  std::map<uint64_t, std::vector<const NcclCollectiveWire*>> by_comm;
  for (const auto& w : collectives) by_comm[w.comm].push_back(&w);
  std::atomic<int32_t> result{ncclSuccess};
  {
    std::vector<std::jthread> threads;
    // By value, not structured bindings: clang 14 (the fuzz build's) cannot capture those.
    for (const auto& entry : by_comm)
      threads.emplace_back([&, handle = entry.first, calls = entry.second] {
        HostComm& c = *as_comm(handle);
        std::lock_guard busy(c.busy);
        std::string why;
        bool ok = c.error.load() == ncclSuccess;
        if (!ok) why = "the communicator had an error before";
        std::vector<const NcclCollectiveWire*> p2p;
        std::vector<size_t> p2p_bytes;
        for (const NcclCollectiveWire* w : calls) {
          size_t size = host_nccl_type_size(w->datatype);
          if (size == 0) {
            fail(ncclInvalidArgument, "the host-test backend does not do NCCL datatype " + std::to_string(w->datatype));
            result = ncclInvalidArgument;
            return;
          }
          if (w->kind == NcclKind::send || w->kind == NcclKind::recv) {
            p2p.push_back(w);
            p2p_bytes.push_back(w->count * size);
          } else if (ok) {
            ok = Run(c, *w, size).go(&why);
          }
        }
        if (ok && !p2p.empty()) ok = run_p2p(c, p2p, p2p_bytes, &why);
        if (!ok) {
          c.error = ncclRemoteError;
          {
            std::lock_guard lock(c.mutex);
            c.last_error = why;
          }
          result = fail(ncclRemoteError, why);
        }
      });
  }
  return result.load();
}

int32_t HostNccl::red_op_create_pre_mul_sum(uint64_t comm, int32_t datatype, int32_t residence, uint64_t scalar,
                                            int32_t* op) {
  if (host_nccl_type_size(datatype) == 0) return fail(ncclInvalidArgument, "unsupported datatype");
  // A device scalar is host memory here.
  const void* value = residence == ncclScalarDevice ? reinterpret_cast<const void*>(scalar) : &scalar;
  HostComm& c = *as_comm(comm);
  std::lock_guard lock(c.mutex);
  *op = c.next_op++;
  c.pre_mul_sums[*op] = host_nccl_value(value, datatype);
  return ncclSuccess;
}

int32_t HostNccl::red_op_destroy(uint64_t comm, int32_t op) {
  HostComm& c = *as_comm(comm);
  std::lock_guard lock(c.mutex);
  return c.pre_mul_sums.erase(op) ? ncclSuccess : ncclInvalidArgument;
}

int32_t HostNccl::comm_register(uint64_t, uint64_t, uint64_t, uint64_t* handle) {
  std::lock_guard lock(mutex_);
  *handle = next_registration_++;
  return ncclSuccess;
}

int32_t HostNccl::comm_deregister(uint64_t, uint64_t) { return ncclSuccess; }

}  // namespace rgpu::server
