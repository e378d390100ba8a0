// The pause a session move needs (docs/migration.md): application threads
// stop at a call boundary, where every exported function enters (api(),
// through_runtime()), so that no call is half routed to the old server and
// half to the new. A thread waiting in a synchronize holds its call until
// its work is done, which is the move's "let queued work finish". Host
// callbacks that thread's stream waits for may call CUDA themselves, so the
// callback runner's threads pass until the move has synchronized.
#pragma once
#include <chrono>

namespace rgpu::client {

struct ThreadGate;  // a thread's place at the gate (move_gate.cpp)

// Held for the length of an exported call; only the outermost one of a
// thread counts (calls nest: the driver API runs the runtime's).
class CallBoundary {
 public:
  CallBoundary();
  ~CallBoundary();
  CallBoundary(const CallBoundary&) = delete;
  CallBoundary& operator=(const CallBoundary&) = delete;

 private:
  ThreadGate* gate_;  // the calling thread's, looked up once per call
  bool outermost_;
};

class MoveGate {
 public:
  // New calls wait (host callbacks' excepted); true once no application
  // thread is inside one, false (the gate open again) after `limit`.
  static bool stop_calls(std::chrono::milliseconds limit);
  // Host callbacks' calls wait too; true once none is inside one, false
  // (the gate open again) after `limit`.
  static bool stop_callbacks(std::chrono::milliseconds limit);
  // Every waiting call goes on.
  static void reopen();
  // This thread runs host callbacks (HostCallbackRunner).
  static void mark_callback_thread();
  // This thread moves sessions: its calls never wait.
  static void mark_mover_thread();
};

}  // namespace rgpu::client
