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
    uint16_t op;
    uint16_t device;
    uint64_t stream;  // the server's handle
    std::vector<uint8_t> args;
    void* host;  // page-locked application memory
    size_t n;
    bool to_device;  // host data is the payload; else the answer fills host
  };

  explicit BackgroundCopies(Session& session) : session_(session) {}

  // False when no thread can take the copy (the server offers no way to
  // join): the caller then copies synchronously.
  bool queue(Copy copy);
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
  };
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
