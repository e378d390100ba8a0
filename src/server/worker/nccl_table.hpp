// The NCCL communicators a session made (nccl_handlers.cpp), with what the
// worker checks calls against: their size and rank, the reduction ops and
// buffer registrations made on them. Those left at the session's end are
// aborted, so a client that dies never leaves its peers' ranks waiting.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "server/backend/nccl_api.hpp"

namespace rgpu::server {

struct NcclCommInfo {
  int device = 0;
  int rank = 0;
  int nranks = 0;
  std::set<int32_t> ops;             // ncclRedOpCreatePreMulSum's
  std::set<uint64_t> registrations;  // ncclCommRegister's
};

class NcclTable {
 public:
  // Communicators one session may hold.
  static constexpr size_t kMaxComms = 4096;

  bool room_for_one_more() const;
  void add(uint64_t comm, NcclCommInfo info);
  std::optional<NcclCommInfo> find(uint64_t comm) const;
  // false when comm is not the session's.
  bool remove(uint64_t comm);
  // Updates a communicator's entry (its ops, registrations); false when gone.
  template <typename F>
  bool update(uint64_t comm, F&& f) {
    std::lock_guard lock(mutex_);
    auto it = comms_.find(comm);
    if (it == comms_.end()) return false;
    return f(it->second);
  }
  // Why the worker last refused a call (ncclGetLastError), taken once read.
  void note_refusal(std::string why);
  std::string take_refusal();
  // At the session's end: aborts what is left.
  void abort_all(NcclApi& nccl);

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, NcclCommInfo> comms_;
  std::string refusal_;
};

}  // namespace rgpu::server
