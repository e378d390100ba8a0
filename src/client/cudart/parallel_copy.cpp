#include "client/cudart/parallel_copy.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

namespace rgpu::client {
namespace {

// Below this, waking helpers costs more than it saves.
constexpr size_t kParallelBytes = 1u << 20;
constexpr unsigned kMaxThreads = 8;

class Helpers {
 public:
  // The caller counts as one thread.
  explicit Helpers(unsigned threads) : threads_(threads) {
    for (unsigned t = 1; t < threads_; ++t) std::thread([this, t] { serve(t); }).detach();
  }

  unsigned threads() const { return threads_; }

  bool run(unsigned parts, const std::function<void(unsigned)>& work) {
    if (parts > threads_) return false;
    std::unique_lock job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      work_ = &work;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    if (parts > 1) start_.notify_all();
    work(0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    return true;
  }

 private:
  void serve(unsigned t) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* work;
      {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (t >= parts_) continue;
        work = work_;
      }
      (*work)(t);
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  const unsigned threads_;
  std::mutex job_mutex_;  // one job at a time uses the helpers
  std::mutex mutex_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;
  unsigned parts_ = 0, pending_ = 0;
  const std::function<void(unsigned)>* work_ = nullptr;
};

// Memory copies use about half the cores, as the GPU's DMA and the
// application need memory bandwidth too.
unsigned memcpy_parts() { return std::clamp(std::thread::hardware_concurrency() / 2, 1u, kMaxThreads); }

// Never destroyed: its threads live as long as the process.
Helpers& helpers() {
  static auto* h = new Helpers(kMaxThreads);
  return *h;
}

}  // namespace

unsigned parallel_threads() { return helpers().threads(); }

bool run_in_parallel(unsigned parts, const std::function<void(unsigned)>& work) {
  return helpers().run(parts, work);
}

void parallel_memcpy(void* dst, const void* src, size_t n) {
  const unsigned parts = memcpy_parts();
  const size_t part = (n + parts - 1) / parts;
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  auto copy_part = [&](unsigned t) {
    size_t off = std::min(n, t * part);
    std::memcpy(d + off, s + off, std::min(part, n - off));
  };
  if (n < kParallelBytes || parts == 1 || !run_in_parallel(parts, copy_part)) std::memcpy(dst, src, n);
}

}  // namespace rgpu::client
