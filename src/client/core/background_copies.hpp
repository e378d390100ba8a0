// Asynchronous copies from the application's page-locked memory to the
// device where the transport cannot share that memory (tcp):
// cudaMemcpyAsync returns at once, as it does locally, and threads of the
// session send the data, each on a lane of its own. Every copy is numbered
// when queued, so the worker queues it on the GPU in the application's
// order; their errors surface at the next synchronous call.
//
// Device-to-host copies are not done this way: the worker streams their
// data as the GPU copies it, block by block, so their requests would count
// as started before the GPU had all of them queued, and a host callback
// queued behind them could wait for data that waits for the callback.
#pragma once
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <set>
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
    std::vector<uint8_t> args;
    const void* host;  // page-locked application memory, sent as the payload
    size_t n;
  };

  explicit BackgroundCopies(Session& session) : session_(session) {}

  // False when no thread can take the copy (the server offers no way to
  // join): the caller then copies synchronously.
  bool queue(Copy copy);
  // Returns once every copy numbered below `seq` has finished, with the
  // first error one of them hit (cudaSuccess if none), reported once.
  cudaError_t settle(uint64_t seq);
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
  std::set<uint64_t> unfinished_;  // numbers queued or in flight
  unsigned threads_ = 0, idle_ = 0;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace rgpu::client
