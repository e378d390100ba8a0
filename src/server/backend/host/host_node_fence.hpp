// TEST BACKEND: CUDA's context-wide waits against running host nodes.
//
// On a GPU, a call may wait behind a context-wide synchronization (a module
// loaded lazily at a kernel's first use, cudaFree, a device synchronize),
// which waits for every host function the device's streams are running. So
// a host function that needs a CUDA call to finish deadlocks whenever such a
// synchronization comes in between; CUDA forbids CUDA calls in host functions
// for this reason. host-test holds every call that queues or waits for work
// on a device until no graph host node runs on it: such a host function
// deadlocks here every time, not only when the timing is unlucky.
#pragma once
#include <condition_variable>
#include <map>
#include <mutex>

namespace rgpu::server {

class HostNodeFence {
 public:
  void began(int device);
  void ended(int device);
  // Returns once no host node runs on `device`.
  void await(int device);

 private:
  std::mutex mutex_;
  std::condition_variable ended_;
  std::map<int, int> running_;  // host nodes by device
};

}  // namespace rgpu::server
