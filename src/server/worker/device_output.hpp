// What kernels print (device printf, assert messages) belongs on the
// application's terminal, not the worker's: the worker's standard output
// and error go into pipes, a thread keeps them drained, and each call that
// flushes device output (a synchronize, a blocking copy) sends what was
// printed to the client ahead of its reply, in order. The worker's own log
// keeps the original standard error.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rgpu::server {

class DeviceOutput {
 public:
  struct Chunk {
    int fd;  // 1 or 2, as printed
    std::string text;
  };

  // Starts capturing; false (and nothing changed) if pipes cannot be made.
  bool capture();
  // Everything printed so far, oldest first; `flush` first pushes out what
  // the C library still buffers.
  std::vector<Chunk> take(bool flush);
  // True when output waits to be taken.
  bool pending() const { return pending_.load(std::memory_order_relaxed); }

  // Only application kernels print, and looking for output costs system
  // calls, so a flushing call looks only while kernels queued on its device
  // may not have printed yet. A device synchronize prints what the kernels
  // queued before it wrote: `kernels_before` is kernels_queued() read before
  // it started.
  void kernel_queued(int device);
  uint64_t kernels_queued(int device);
  void printed_through(int device, uint64_t kernels_before);
  bool may_hold_output(int device);

 private:
  void drain_loop();
  void read_available();  // with mutex_ held

  int read_fd_[2] = {-1, -1};
  std::mutex mutex_;
  std::vector<Chunk> chunks_;
  std::atomic<bool> pending_{false};
  struct KernelCount {
    uint64_t queued = 0, printed = 0;
  };
  std::mutex counts_mutex_;
  std::vector<KernelCount> counts_;  // by device
  KernelCount& count(int device);    // with counts_mutex_ held
  std::thread drainer_;
};

}  // namespace rgpu::server
