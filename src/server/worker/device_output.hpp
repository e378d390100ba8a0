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

 private:
  void drain_loop();
  void read_available();  // with mutex_ held

  int read_fd_[2] = {-1, -1};
  std::mutex mutex_;
  std::vector<Chunk> chunks_;
  std::atomic<bool> pending_{false};
  std::thread drainer_;
};

}  // namespace rgpu::server
