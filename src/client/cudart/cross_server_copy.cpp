#include "client/cudart/cross_server_copy.hpp"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "client/cudart/copy_engine.hpp"

namespace rgpu::client {
namespace {

// Large enough that a chunk's round trips cost little beside its bytes, and
// that tcp stripes each chunk's copy (16 MB and more) as it would the whole.
constexpr size_t kChunk = size_t{16} << 20;

// A resident thread that runs one job at a time beside its caller; resident
// so that its connections to the servers stay open between copies. Never
// destroyed: its thread lives as long as the process.
class SecondThread {
 public:
  SecondThread() { std::thread([this] { serve(); }).detach(); }

  // Starts work on the thread and runs own() meanwhile; false, with nothing
  // run, when the thread is busy with another caller's job.
  bool run_beside(const std::function<void()>& work, const std::function<void()>& own) {
    std::unique_lock job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      work_ = &work;
    }
    changed_.notify_all();
    own();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return work_ == nullptr; });
    return true;
  }

 private:
  void serve() {
    for (;;) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return work_ != nullptr; });
      lock.unlock();
      (*work_)();
      lock.lock();
      work_ = nullptr;
      changed_.notify_all();
    }
  }

  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* work_ = nullptr;
};

SecondThread& second_thread() {
  static auto* t = new SecondThread;
  return *t;
}

// Chunk c out of the source's GPU and chunk c - 1 into the destination's at
// once, through two buffers: the caller copies out, the second thread in.
class ChunkPipeline {
 public:
  ChunkPipeline(void* dst, const void* src, size_t n)
      : dst_(static_cast<char*>(dst)), src_(static_cast<const char*>(src)), n_(n),
        chunks_((n + kChunk - 1) / kChunk) {
    for (auto& b : buffers_) b.reset(new char[std::min(n, kChunk)]);  // not zeroed: every byte is copied over
  }

  cudaError_t run() {
    if (chunks_ < 2 || !second_thread().run_beside([this] { copy_in(); }, [this] { copy_out(); }))
      return run_alone();
    return error_;
  }

 private:
  size_t bytes(size_t c) const { return std::min(kChunk, n_ - c * kChunk); }
  char* buffer(size_t c) { return buffers_[c % 2].get(); }

  void copy_out() {
    for (size_t c = 0; c < chunks_; ++c) {
      if (!wait_until([&] { return c < drained_ + 2; })) return;
      cudaError_t e = copy_linear(buffer(c), src_ + c * kChunk, bytes(c), cudaMemcpyDeviceToHost, nullptr, false);
      if (!done(e, &filled_, c + 1)) return;
    }
  }

  void copy_in() {
    for (size_t c = 0; c < chunks_; ++c) {
      if (!wait_until([&] { return c < filled_; })) return;
      cudaError_t e = copy_linear(dst_ + c * kChunk, buffer(c), bytes(c), cudaMemcpyHostToDevice, nullptr, false);
      if (!done(e, &drained_, c + 1)) return;
    }
  }

  // False when the other side failed.
  template <typename Ready>
  bool wait_until(Ready ready) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready() || error_; });
    return !error_;
  }

  bool done(cudaError_t e, size_t* count, size_t value) {
    std::lock_guard lock(mutex_);
    if (e && !error_) error_ = e;
    *count = value;
    changed_.notify_all();
    return !error_;
  }

  // One chunk, or the second thread busy: the same copies one after the other.
  cudaError_t run_alone() {
    for (size_t c = 0; c < chunks_; ++c) {
      if (cudaError_t e = copy_linear(buffer(0), src_ + c * kChunk, bytes(c), cudaMemcpyDeviceToHost, nullptr, false))
        return e;
      if (cudaError_t e = copy_linear(dst_ + c * kChunk, buffer(0), bytes(c), cudaMemcpyHostToDevice, nullptr, false))
        return e;
    }
    return cudaSuccess;
  }

  char* const dst_;
  const char* const src_;
  const size_t n_, chunks_;
  std::unique_ptr<char[]> buffers_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t filled_ = 0, drained_ = 0;  // chunks copied out of the source, into the destination
  cudaError_t error_ = cudaSuccess;
};

}  // namespace

cudaError_t copy_across_servers(void* dst, const void* src, size_t n) {
  if (n == 0) return cudaSuccess;
  return ChunkPipeline(dst, src, n).run();
}

}  // namespace rgpu::client
