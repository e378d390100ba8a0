// The host-test NCCL stand-in's sockets: a unique id names a bootstrap
// listener on the worker that made it (127.0.0.1, as every host-test server
// runs on one host); each rank of a communicator reports its own data
// listener there, gets everyone's, and connects to every other rank (a full
// mesh; correctness, not speed).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/nccl_wire.hpp"

namespace rgpu::server {

// Makes a unique id and starts its bootstrap listener, which serves one
// communicator's ranks (or gives up after a while); false: *why.
bool host_nccl_make_id(proto::NcclUniqueIdWire* id, std::string* why);

class HostNcclMesh {
 public:
  // Joins the communicator of `id` as `rank` of `nranks`: blocks until every
  // rank has joined, or fails (*why) on a bad id or a lost peer.
  static bool join(const proto::NcclUniqueIdWire& id, int nranks, int rank, HostNcclMesh* mesh, std::string* why);
  HostNcclMesh() = default;
  HostNcclMesh(const HostNcclMesh&) = delete;
  HostNcclMesh& operator=(const HostNcclMesh&) = delete;
  ~HostNcclMesh();

  int rank() const { return rank_; }
  int nranks() const { return static_cast<int>(fds_.size()); }
  // Sends send_n bytes to `peer` and receives recv_n bytes from it; the
  // lower rank sends first, so that ranks taking their peers in increasing
  // order never wait on each other in a cycle. false: *why (the peer is gone).
  bool exchange(int peer, const void* send, size_t send_n, void* recv, size_t recv_n, std::string* why);
  // Wakes a blocked exchange (it fails) and fails every later one.
  void shut();

 private:
  int rank_ = 0;
  std::vector<int> fds_;  // by rank; -1 for our own
  std::atomic<bool> shut_{false};
};

}  // namespace rgpu::server
