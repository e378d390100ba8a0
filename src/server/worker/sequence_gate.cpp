#include "server/worker/sequence_gate.hpp"

namespace rgpu::server {

bool SequenceGate::wait_turn(uint64_t seq) {
  if (seq == 0) return true;
  std::unique_lock lock(mutex_);
  turn_.wait(lock, [&] { return closed_ || last_started_ + 1 >= seq; });
  return !closed_;
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
