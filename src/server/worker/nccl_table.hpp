// The NCCL communicators a session made (nccl_handlers.cpp), with what the
// worker checks calls against: their size and rank, the reduction ops and
// buffer registrations made on them. Those left at the session's end are
// aborted, so a client that dies never leaves its peers' ranks waiting.
//
// Finalize, destroy and abort run off the session's thread: NCCL makes them
// collective (each rank waits for the others), and one application process
// may hold several ranks of a communicator, each on another server, and end
// them one after another; a worker that waited for its rank's end would
// block that process before it ends the next rank.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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
  int32_t async_failure = 0;         // a posted call's failure (ncclCommGetAsyncError)
};

class NcclTable {
 public:
  // Communicators held.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return comms_.size();
  }
  // Communicators one session may hold.
  static constexpr size_t kMaxComms = 4096;

  NcclTable();

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
  // Runs `end` (finalize, destroy or abort of comm) on a thread of its
  // own, after the ends of comm started before it; `last`: comm's final
  // end (its handle may name another communicator afterwards).
  void end_in_background(uint64_t comm, bool last, const char* what, std::function<int32_t()> end);
  // At the session's end: aborts what is left, then waits up to `limit`
  // for every end to finish; false when some still run.
  bool abort_all(NcclApi& nccl, std::chrono::seconds limit);

 private:
  struct Ends;
  mutable std::mutex mutex_;
  std::map<uint64_t, NcclCommInfo> comms_;
  std::string refusal_;
  // Shared with the ends' threads, which may outlive the table.
  std::shared_ptr<Ends> ends_;
};

}  // namespace rgpu::server
