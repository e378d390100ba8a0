// Keeps the application's order across a session's connections. The client
// numbers its requests to this server from 1 across all its threads; request
// n starts only once every request before it has started, and an
// asynchronous one (a launch, an async copy) counts as started only once it
// is queued on the GPU. So work one thread queued is on the GPU before a
// later call of another thread runs, as with local CUDA, while a blocking
// call (it counts as started when it begins) never holds up other threads.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace rgpu::server {

class SequenceGate {
 public:
  // Waits until request `seq` may start; false once the gate is closed.
  // Requests numbered 0 are not ordered and pass at once.
  bool wait_turn(uint64_t seq);
  // Request `seq` has started (see above); lets the next one go.
  void started(uint64_t seq);
  // The session is over: every waiter gives up.
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  uint64_t last_started_ = 0;
  bool closed_ = false;
};

}  // namespace rgpu::server
