// Keeps the application's order across a session's connections. The client
// numbers its requests to this server from 1 across all its threads; request
// n starts only once every request before it has started, and an
// asynchronous one (a launch, an async copy) counts as started only once it
// is queued on the GPU. So work one thread queued is on the GPU before a
// later call of another thread runs, as with local CUDA, while a blocking
// call (it counts as started when it begins) never holds up other threads.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace rgpu::server {

class SequenceGate {
 public:
  // How far ahead of the last started request a request may be numbered: a
  // client has at most what its connections' buffers hold in flight.
  static constexpr uint64_t kMaxAhead = uint64_t{1} << 24;
  // Checked while waiting, about every kPollInterval: true once the waiting
  // request's connection is gone, and then the wait ends.
  using Abandoned = std::function<bool()>;
  static constexpr std::chrono::milliseconds kPollInterval{200};

  enum class Turn { go, closed, out_of_range, abandoned };
  // Waits until request `seq` may start: once every request before it has,
  // or, for the part of a copy with `parts_before` parts numbered just
  // before it (proto::parts_before), every request before the first part.
  // Requests numbered 0 are not ordered and pass at once; one numbered past
  // kMaxAhead never will, and nothing waits for it: a request cannot pin the
  // session.
  Turn wait_turn(uint64_t seq, unsigned parts_before = 0, const Abandoned& abandoned = nullptr);
  // Request `seq` has started (see above); lets the next one go.
  void started(uint64_t seq);
  // The session is over: every waiter gives up.
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  // Every request up to last_started_ has started; parts of a copy may
  // start out of order, at most kMaxPartsBefore ahead: those are held here.
  uint64_t last_started_ = 0;
  std::set<uint64_t> started_ahead_;
  bool closed_ = false;
};

}  // namespace rgpu::server
