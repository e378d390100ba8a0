// The daemon's workers: processes forked ahead of time that initialise CUDA
// and wait for a connection. Each serves one session and exits, so all of a
// session's GPU state dies with its process. The daemon itself never loads a
// backend.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "server/daemon/server_config.hpp"
#include "server/daemon/unauthenticated_limits.hpp"
#include "server/worker/peer_warnings.hpp"
#include "server/pool/server_counters.hpp"

namespace rgpu::server {

class WorkerPool {
 public:
  WorkerPool(const ServerConfig& config, JobLedger& ledger, ServerCounters& counters);

  // Keeps `workers` idle or starting workers, and one for each queued
  // connection that may start its hello.
  void top_up();
  // Queues an accepted connection, which goes to the next ready worker as
  // the bounds on unauthenticated connections allow; returns "" then. Else
  // returns why it is turned away (*kind: which bound), the descriptor
  // still the caller's.
  std::string hand_off(int client_fd, std::string* kind);
  // Closes queued connections past their hello deadline and kills workers
  // whose client is still in its hello well past it.
  void enforce_hello_deadlines();
  // Control channels to watch: readiness or death of a starting worker,
  // admission requests of serving ones (see admission.hpp).
  std::vector<int> channels() const;
  void on_channel_readable(int channel);
  // Queued connections that no worker can serve, because the last worker
  // failed to start (*why: its reason); the caller refuses them. hand_off
  // turns new ones away for the same reason until a worker starts.
  std::vector<int> take_unservable(std::string* why);
  void reap();
  // Stops the workers that must go: those of jobs `rgpu job-end` ended, and
  // serving ones past stop_all_workers' grace.
  void stop_due_workers();
  // Stops every worker (`why` logged), after their GPU's MPS server failed:
  // idle ones at once, serving ones after `grace` (time for the error their
  // sessions met to reach their clients). No worker starts and no client is
  // handed on until resume(); stopped() says when the last has exited.
  void stop_all_workers(const char* why, std::chrono::milliseconds grace);
  bool holding() const { return held_; }
  // Takes no new session from now on (`rgpu-server` got SIGUSR1): idle
  // workers stop, none starts, queued and new connections are turned away
  // (take_unservable, hand_off) with `why`; serving ones go on to their end.
  void drain(std::string why);
  bool draining() const { return !drain_why_.empty(); }
  // Draining, and no worker is left.
  bool drained() const;
  bool stopped() const;
  void resume();
  void shutdown();

 private:
  using Clock = std::chrono::steady_clock;
  struct Worker {
    pid_t pid;
    int channel;
    Clock::time_point forked;
    bool ready = false;
  };
  struct Queued {
    int fd;
    Clock::time_point accepted;
    UnauthenticatedLimits::Id hello;
  };
  struct Serving {
    pid_t pid;
    int channel;
    UnauthenticatedLimits::Id hello;  // 0 once it asked admission
    std::string identity;  // set once admitted
  };
  void spawn();
  // Why no client can be served now (the last worker said it cannot start,
  // and none is ready); "" when one can.
  std::string unservable_reason() const;
  void dispatch();
  // Closes queued connections whose client has gone (killed, or tired of
  // waiting): a worker start is the scarce thing under load, and one spent
  // on a gone client delays every client queued behind it.
  void drop_departed_clients();
  void admit(Serving& w);
  void forget_serving(pid_t pid);
  // Kills the idle and starting workers (`why` logged); they go to stopping_.
  void stop_idle_workers(const char* why);

  const ServerConfig& config_;
  JobLedger& ledger_;
  ServerCounters& counters_;
  std::vector<Worker> waiting_;  // starting or ready, not yet serving
  std::deque<Queued> pending_;   // accepted connections waiting for a worker
  UnauthenticatedLimits unauthenticated_;
  PeerWarnings warnings_{1};
  std::vector<Serving> serving_;
  // After a worker fails to start (no GPU, bad backend) new ones wait a
  // while instead of forking in a tight loop.
  Clock::time_point retry_after_{};
  std::string start_failure_;  // why a worker last said it cannot start; "" once one started
  std::string drain_why_;  // non-empty: draining
  // Between stop_all_workers and resume: killed workers not yet reaped, and
  // when the serving ones are killed (with why).
  bool held_ = false;
  std::vector<pid_t> stopping_;
  std::optional<Clock::time_point> stop_serving_at_;
  std::string stop_why_;
};

}  // namespace rgpu::server
