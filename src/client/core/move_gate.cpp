#include "client/core/move_gate.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "client/core/thread_resident.hpp"

namespace rgpu::client {
namespace {

enum Phase : int { kOpen = 0, kCallsStopped = 1, kAllStopped = 2 };

// Every thread that ever made a call, so a move can see who is inside one.
struct GateRegistry {
  std::mutex mutex;
  std::condition_variable opened;
  std::vector<ThreadGate*> threads;
  std::atomic<int> phase{kOpen};
};

GateRegistry& registry() {
  static auto* r = new GateRegistry;  // never destroyed: threads end after exit()
  return *r;
}

}  // namespace

struct ThreadGate {
  // Inside an outermost call. Written by its thread, read by the mover:
  // sequentially consistent with `phase`, so that a thread either sees the
  // gate shut or is seen inside (Dekker's handshake).
  std::atomic<bool> inside{false};
  int depth = 0;  // its own thread's alone
  // Set by its thread, read by a mover.
  std::atomic<bool> callback_thread{false};
  std::atomic<bool> mover{false};
  ThreadGate() {
    std::lock_guard lock(registry().mutex);
    registry().threads.push_back(this);
  }
  ~ThreadGate() {
    std::lock_guard lock(registry().mutex);
    std::erase(registry().threads, this);
  }
};

namespace {

ThreadResident<ThreadGate> t_gate;

bool may_pass(const ThreadGate& t, int phase) {
  return phase == kOpen || t.mover || (phase == kCallsStopped && t.callback_thread);
}

// Waits until no thread that `counts` is inside a call; false after `limit`.
template <typename Counts>
bool wait_until_out(std::chrono::milliseconds limit, Counts counts) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    {
      std::lock_guard lock(registry().mutex);
      if (std::none_of(registry().threads.begin(), registry().threads.end(),
                       [&](ThreadGate* t) { return counts(*t) && t->inside.load(); }))
        return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

CallBoundary::CallBoundary() : gate_(&t_gate.get()) {
  ThreadGate& t = *gate_;
  outermost_ = t.depth++ == 0;
  if (!outermost_) return;
  GateRegistry& r = registry();
  for (;;) {
    t.inside.store(true);
    if (may_pass(t, r.phase.load())) return;
    t.inside.store(false);
    std::unique_lock lock(r.mutex);
    r.opened.wait(lock, [&] { return may_pass(t, r.phase.load()); });
  }
}

CallBoundary::~CallBoundary() {
  --gate_->depth;
  if (outermost_) gate_->inside.store(false);
}

bool MoveGate::stop_calls(std::chrono::milliseconds limit) {
  registry().phase.store(kCallsStopped);
  if (wait_until_out(limit, [](const ThreadGate& t) { return !t.callback_thread && !t.mover; })) return true;
  reopen();
  return false;
}

bool MoveGate::stop_callbacks(std::chrono::milliseconds limit) {
  registry().phase.store(kAllStopped);
  if (wait_until_out(limit, [](const ThreadGate& t) { return !t.mover; })) return true;
  reopen();
  return false;
}

void MoveGate::reopen() {
  GateRegistry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    r.phase.store(kOpen);
  }
  r.opened.notify_all();
}

void MoveGate::mark_callback_thread() { t_gate->callback_thread = true; }
void MoveGate::mark_mover_thread() { t_gate->mover = true; }

}  // namespace rgpu::client
