// The daemon's bookkeeping of connections not yet authenticated: from
// accept until their worker is admitted (or ends). Nothing a peer does
// before authenticating may cost more than a few bytes and a deadline, so
// such connections are bounded per source (a peer host, or a local user)
// and in total, and never hold a session slot:
// - at most `per_source` of one source are in a worker's hello at once;
//   more of that source wait in the queue (holding no worker), up to twice
//   `per_source` of the source in all; past that they are turned away at once;
// - at most `total` in hello or queued, from all sources;
// - a queued connection held back by its source's bound is closed when its
//   hello deadline (from accept) passes (one that only waits for a worker
//   to start is not: clients of a busy server are not the flood); a worker
//   still in its hello `grace` after its own deadline (from hand-off) is
//   killed.
// Pure bookkeeping (no descriptors, no clock of its own), so that tests and
// fuzzing drive it without processes.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rgpu::server {

class UnauthenticatedLimits {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;
  struct Bounds {
    size_t per_source = 16;
    size_t total = 64;
    Clock::duration hello_timeout = std::chrono::seconds(5);
    Clock::duration grace = std::chrono::seconds(1);
  };
  enum class Verdict { queued, over_source_bound, over_total_bound };

  explicit UnauthenticatedLimits(Bounds bounds) : bounds_(bounds) {}

  // A connection of `source` was accepted: queued (*id names it from now
  // on) or turned away.
  Verdict accept(const std::string& source, Clock::time_point now, Id* id);
  // The oldest queued connection whose source may start another hello.
  std::optional<Id> next_to_dispatch() const;
  // How many queued connections could be handed to workers now.
  size_t dispatchable() const;
  // A queued connection was handed to a worker.
  void dispatched(Id id, Clock::time_point now);
  // Its worker was admitted or ended, or the queued connection closed:
  // it counts no more. Unknown ids are ignored.
  void finished(Id id);
  // Queued connections held back by their source's bound whose hello
  // deadline passed (to close).
  std::vector<Id> expired_in_queue(Clock::time_point now) const;
  // Connections whose worker is past its deadline and grace (to kill).
  std::vector<Id> overdue_in_hello(Clock::time_point now) const;

  size_t queued() const { return queued_; }
  size_t in_hello() const { return entries_.size() - queued_; }
  size_t in_hello_of(const std::string& source) const;
  size_t queued_of(const std::string& source) const;
  const Bounds& bounds() const { return bounds_; }

 private:
  struct Entry {
    std::string source;
    bool in_hello = false;
    Clock::time_point since;  // accepted, or dispatched once in hello
  };
  struct Source {
    size_t queued = 0;
    size_t in_hello = 0;
  };
  const Bounds bounds_;
  Id next_id_ = 1;
  std::map<Id, Entry> entries_;  // in accept order
  std::map<std::string, Source> sources_;  // only sources with entries
  size_t queued_ = 0;
};

}  // namespace rgpu::server
