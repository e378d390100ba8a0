#include "client/core/background_copies.hpp"

#include <thread>
#include <utility>

#include "client/core/session.hpp"

namespace rgpu::client {
namespace {
// Copies waiting on different streams each need a thread: one waits for
// its GPU work while another's data moves.
constexpr unsigned kMaxThreads = 4;
}  // namespace

bool BackgroundCopies::queue(Copy copy) {
  std::unique_lock lock(mutex_);
  if (idle_ == 0 && threads_ < kMaxThreads) {
    lock.unlock();
    Lane* lane = session_.dedicated_lane();
    lock.lock();
    if (lane) {
      ++threads_;
      ++idle_;
      std::thread([this, lane] { serve(lane); }).detach();
    } else if (threads_ == 0) {
      return false;
    }
  }
  // Numbered under the lock, so the queue is in number order.
  uint64_t seq = session_.next_seq();
  queue_.push_back({std::move(copy), seq});
  unfinished_.emplace(seq, &queue_.back().copy);
  work_.notify_one();
  return true;
}

void BackgroundCopies::serve(Lane* lane) {
  for (;;) {
    Queued q;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return !queue_.empty(); });
      q = std::move(queue_.front());
      queue_.pop_front();
      unfinished_[q.seq] = &q.copy;
      --idle_;
    }
    const Copy& c = q.copy;
    iovec data{c.host, c.n};
    cudaError_t e = c.to_device ? lane->post_answered(c.op, c.device, c.args, {&data, 1}, nullptr, 0, q.seq)
                                : lane->post_answered(c.op, c.device, c.args, {}, c.host, c.n, q.seq);
    std::lock_guard lock(mutex_);
    if (e != cudaSuccess && error_ == cudaSuccess) error_ = e;
    unfinished_.erase(q.seq);
    ++idle_;
    finished_.notify_all();
  }
}

void BackgroundCopies::wait_before_on(uint64_t seq, uint16_t device, uint64_t stream) {
  const bool legacy = stream == 0 || stream == reinterpret_cast<uint64_t>(cudaStreamLegacy);
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] {
    for (auto it = unfinished_.begin(); it != unfinished_.end() && it->first < seq; ++it)
      if (legacy || (it->second->device == device && it->second->stream == stream)) return false;
    return true;
  });
}

cudaError_t BackgroundCopies::settle(uint64_t seq) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return unfinished_.empty() || unfinished_.begin()->first >= seq; });
  return std::exchange(error_, cudaSuccess);
}

void BackgroundCopies::drain() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return unfinished_.empty(); });
}

}  // namespace rgpu::client
