// Host callbacks (cudaLaunchHostFunc, cudaStreamAddCallback) run in the
// application's process, in stream order: the worker queues a host function
// on the GPU stream that asks the client, over the session's callback
// connection, to run callback n, and returns only once it has, so later
// work on the stream waits for it as it would locally. Async notifications
// take the same connection but nothing waits for them.
//
// A graph's host node that stages a copy of pageable application memory
// (tcp, ucx; client/graph/staged_copy.hpp) moves its bytes on this
// connection: a download's staging block goes with the message that runs the
// callback, and an upload's bytes come back with the client's answer, straight
// into the block. So while CUDA waits for the host node the worker makes no
// CUDA call for it, which a context-wide wait (a kernel's lazy loading,
// cudaFree) could hold up behind the host node itself.
#pragma once
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "transport/transport.hpp"

namespace rgpu::server {

// A staging block of the worker's page-locked memory a host node fills from
// the client (upload) or sends to it; none: `bytes` 0.
struct CallbackStaging {
  char* block = nullptr;
  uint64_t bytes = 0;
  bool upload = false;
};

class HostCallbacks {
 public:
  // On the thread where CUDA runs host functions: returns once the client
  // ran callback `id` (queued by request `seq`), or is gone.
  void run(uint64_t id, uint64_t seq, const CallbackStaging& staging = {});
  // The client joined its callback connection (serve follows). Until then
  // no callback can run: run returns at once rather than wait for ever.
  void attach();
  bool attached();
  // Queues a notification for client callback `id` and returns at once.
  void notify(uint64_t id, const cudaAsyncNotificationInfo_t& info);
  // Serves the client's callback connection until it closes.
  void serve(transport::Connection& conn);
  // The session is over: nothing more runs, nobody waits.
  void close();

 private:
  struct Due {
    uint64_t id;
    uint64_t seq;
    CallbackStaging staging;
    bool done = false;
  };
  void finish_all();  // with mutex_ held

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Due*> due_;
  std::deque<std::pair<uint64_t, cudaAsyncNotificationInfo_t>> notifications_;
  bool attached_ = false;
  bool closed_ = false;
};

}  // namespace rgpu::server
