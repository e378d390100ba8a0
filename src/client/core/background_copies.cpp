#include "client/core/background_copies.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "client/core/lane.hpp"
#include "client/core/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {
// Copies waiting on different streams each need a thread: one waits for
// its GPU work while another's data moves.
constexpr unsigned kMaxThreads = 4;
constexpr size_t kPage = 4096;
}  // namespace

bool BackgroundCopies::enough_threads(std::unique_lock<std::mutex>& lock, unsigned wanted) {
  while (idle_ < wanted && threads_ < kMaxThreads) {
    lock.unlock();
    Lane* lane = session_.dedicated_lane();
    lock.lock();
    if (!lane) break;
    ++threads_;
    ++idle_;
    std::thread([this, lane] { serve(lane); }).detach();
  }
  return threads_ > 0;
}

bool BackgroundCopies::queue(const Copy& copy, unsigned parts) {
  parts = std::clamp<unsigned>(parts, 1, proto::kMaxPartsBefore + 1);
  std::unique_lock lock(mutex_);
  if (!enough_threads(lock, parts)) return false;
  // Parts end on page boundaries; numbered under the lock, so the queue is
  // in number order and one copy's parts are numbered one after the other.
  const size_t part = (copy.n / parts + kPage - 1) / kPage * kPage;
  for (unsigned i = 0; i < parts && i * part < copy.n; ++i) {
    const size_t off = i * part;
    Copy c = copy;
    c.device_ptr += off;
    c.host = static_cast<char*>(copy.host) + off;
    c.n = std::min(part, copy.n - off);
    const uint64_t seq = session_.next_seq();
    queue_.push_back({c, seq, i});
    unfinished_.emplace(seq, &queue_.back().copy);
  }
  work_.notify_all();
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
    proto::Writer args;
    cudaError_t e;
    if (c.to_device) {
      args.put<uint64_t>(c.device_ptr).put<uint64_t>(c.stream).put<uint8_t>(0);
      iovec data{c.host, c.n};
      e = lane->post_answered(proto::kOpMemcpyHtoD, c.device, args.bytes(), {&data, 1}, nullptr, 0, q.seq,
                              q.parts_before);
    } else {
      args.put<uint64_t>(c.device_ptr).put<uint64_t>(c.n).put<uint64_t>(c.stream);
      e = lane->post_answered(proto::kOpMemcpyDtoH, c.device, args.bytes(), {}, c.host, c.n, q.seq, q.parts_before);
      // Answered once the stream got there: it is idle if nothing came after.
      if (e == cudaSuccess) session_.mark_idle(q.seq, c.device, c.stream);
    }
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
