// The client's error log, what cudaLogs* and cuLogs* report: the errors and
// warnings rgpu's client logs (unsupported calls, refused arguments, lost
// servers), not the remote driver's log, whose messages are about the
// worker's calls. Kept in a bounded buffer as NVIDIA's driver keeps its own;
// callbacks run in the thread that logged, in the application's process.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>

namespace rgpu::client {

class ErrorLog {
 public:
  static ErrorLog& get();

  // level is cudaLogLevel (the driver's CUlogLevel has the same values).
  void add(int level, const char* message, size_t length);

  cudaError_t add_callback(cudaLogsCallback_t fn, void* data, cudaLogsCallbackHandle* handle);
  cudaError_t remove_callback(cudaLogsCallbackHandle handle);
  // The iterator of the next message.
  cudaLogIterator current();
  // The messages from *from (all kept ones when null), one a line, oldest
  // first, after a note when some were already dropped; advances *from.
  std::string dump(cudaLogIterator* from);
  // As cudaLogsDumpToMemory: the newest messages that fit, NUL-terminated.
  cudaError_t dump_to_memory(cudaLogIterator* from, char* buffer, size_t* size);

 private:
  ErrorLog() = default;
  void drop_oldest_over_limit();

  // As NVIDIA's driver: at most this many bytes of messages are kept.
  static constexpr size_t kMaxBytes = 25600;

  std::mutex mutex_;
  std::deque<std::string> messages_;
  cudaLogIterator first_ = 0;  // iterator of messages_.front()
  size_t bytes_ = 0;
  std::unordered_set<cudaLogsCallbackHandle> callbacks_;
};

}  // namespace rgpu::client
