#include "client/cudart/parallel_copy.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace rgpu::client {
namespace {

// Below this, waking helpers costs more than it saves.
constexpr size_t kParallelBytes = 1u << 20;
constexpr unsigned kMaxThreads = 8;

class CopyHelpers {
 public:
  // The caller counts as one thread; about half the cores, as the GPU's
  // DMA and the application need memory bandwidth too.
  CopyHelpers() : threads_(std::clamp(std::thread::hardware_concurrency() / 2, 1u, kMaxThreads)) {
    for (unsigned t = 1; t < threads_; ++t) std::thread([this, t] { serve(t); }).detach();
  }

  bool try_copy(char* dst, const char* src, size_t n) {
    std::unique_lock job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock() || threads_ == 1) return false;
    {
      std::lock_guard lock(mutex_);
      dst_ = dst;
      src_ = src;
      n_ = n;
      part_ = (n + threads_ - 1) / threads_;
      pending_ = threads_ - 1;
      ++generation_;
    }
    start_.notify_all();
    copy_part(0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    return true;
  }

 private:
  void copy_part(unsigned t) {
    size_t off = std::min(n_, t * part_);
    std::memcpy(dst_ + off, src_ + off, std::min(part_, n_ - off));
  }

  void serve(unsigned t) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
      }
      copy_part(t);
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  const unsigned threads_;
  std::mutex job_mutex_;  // one copy at a time uses the helpers
  std::mutex mutex_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;
  unsigned pending_ = 0;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  size_t n_ = 0, part_ = 0;
};

}  // namespace

void parallel_memcpy(void* dst, const void* src, size_t n) {
  // Never destroyed: its threads live as long as the process.
  static auto* helpers = new CopyHelpers;
  if (n < kParallelBytes || !helpers->try_copy(static_cast<char*>(dst), static_cast<const char*>(src), n))
    std::memcpy(dst, src, n);
}

}  // namespace rgpu::client
