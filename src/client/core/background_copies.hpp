// Asynchronous copies between the device and the application's page-locked
// memory where the transport cannot share that memory (tcp):
// cudaMemcpyAsync returns at once, as it does locally, and threads of the
// session move the data, each on a lane of its own. Every copy is numbered
// when queued, and the worker queues each on the GPU whole before it lets
// later requests start, so the application's order holds. A synchronous
// call returns once the copies numbered before it are done; their errors
// surface there.
#pragma once
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

namespace rgpu::client {

class Session;
class Lane;

class BackgroundCopies {
 public:
  struct Copy {
    uint16_t device;
    uint64_t stream;      // the server's handle
    uint64_t device_ptr;  // the device side
    void* host;           // page-locked application memory
    size_t n;
    bool to_device;  // host data is the payload; else the answer fills host
  };

  explicit BackgroundCopies(Session& session) : session_(session) {}

  // Queues `copy` cut into `parts` (one TCP stream moves only what one core
  // copies): consecutive numbers, each part sent on a thread and connection
  // of its own as threads are free, all queued on the GPU before any later
  // request starts (proto::parts_before). False when no thread can take it
  // (the server offers no way to join): the caller then copies synchronously.
  bool queue(const Copy& copy, unsigned parts = 1);
  // Returns once every copy numbered below `seq` has finished, with the
  // first error one of them hit (cudaSuccess if none), reported once.
  cudaError_t settle(uint64_t seq);
  // Returns once the copies numbered below `seq` on `stream` of `device`
  // are done (on the legacy default stream: all of them). A copy on another
  // stream may be waiting for the GPU, even for the host callback asking.
  void wait_before_on(uint64_t seq, uint16_t device, uint64_t stream);
  // Waits for every queued copy (before page-locked memory is freed).
  void drain();

 private:
  struct Queued {
    Copy copy;
    uint64_t seq;
    unsigned parts_before;  // of the same copy, numbered just before it
  };
  // Starts threads (up to kMaxThreads) until `wanted` are idle or can be.
  bool enough_threads(std::unique_lock<std::mutex>& lock, unsigned wanted);
  void serve(Lane* lane);

  Session& session_;
  std::mutex mutex_;
  std::condition_variable work_, finished_;
  std::deque<Queued> queue_;
  std::map<uint64_t, const Copy*> unfinished_;  // queued or in flight, by number
  unsigned threads_ = 0, idle_ = 0;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace rgpu::client
