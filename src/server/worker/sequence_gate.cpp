#include "server/worker/sequence_gate.hpp"

namespace rgpu::server {

SequenceGate::Turn SequenceGate::wait_turn(uint64_t seq, const Abandoned& abandoned) {
  if (seq == 0) return Turn::go;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closed_) return Turn::closed;
    if (last_started_ + 1 >= seq) return Turn::go;
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
    if (seq <= last_started_) return;
    last_started_ = seq;
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
