#include "server/worker/sequence_gate.hpp"

#include <algorithm>

#include "protocol/wire.hpp"

namespace rgpu::server {

SequenceGate::Turn SequenceGate::wait_turn(uint64_t seq, unsigned parts_before, const Abandoned& abandoned) {
  if (seq == 0) return Turn::go;
  // The first part of the copy waits for the request before it.
  const uint64_t first = seq - std::min<uint64_t>(std::min(parts_before, proto::kMaxPartsBefore), seq - 1);
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closed_) return Turn::closed;
    if (last_started_ + 1 >= first) return Turn::go;
    if (seq - last_started_ > kMaxAhead) return Turn::out_of_range;
    if (turn_.wait_for(lock, kPollInterval) == std::cv_status::timeout && abandoned) {
      lock.unlock();
      bool gone = abandoned();
      lock.lock();
      if (gone) return Turn::abandoned;
    }
  }
}

void SequenceGate::started(uint64_t seq) {
  if (seq == 0) return;
  {
    std::lock_guard lock(mutex_);
    if (seq <= last_started_ || seq - last_started_ > proto::kMaxPartsBefore + 1) return;
    started_ahead_.insert(seq);
    while (!started_ahead_.empty() && *started_ahead_.begin() == last_started_ + 1) {
      last_started_ = *started_ahead_.begin();
      started_ahead_.erase(started_ahead_.begin());
    }
  }
  turn_.notify_all();
}

void SequenceGate::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  turn_.notify_all();
}

}  // namespace rgpu::server
