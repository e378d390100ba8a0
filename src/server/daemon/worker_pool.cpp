#include "server/daemon/worker_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "common/printable.hpp"
#include "server/daemon/admission.hpp"
#include "server/daemon/fd_passing.hpp"
#include "server/daemon/worker_process.hpp"
#include "server/worker/ipc_records.hpp"
#include "transport/socket/socket_address.hpp"

namespace rgpu::server {
namespace {

UnauthenticatedLimits::Bounds bounds_of(const ServerConfig& config) {
  UnauthenticatedLimits::Bounds b;
  b.per_source = static_cast<size_t>(config.max_unauthenticated_per_client);
  b.total = static_cast<size_t>(config.max_unauthenticated);
  b.hello_timeout = std::chrono::seconds(config.hello_timeout_s);
  return b;
}

}  // namespace

WorkerPool::WorkerPool(const ServerConfig& config, JobLedger& ledger, ServerCounters& counters)
    : config_(config), ledger_(ledger), counters_(counters), unauthenticated_(bounds_of(config)) {}

void WorkerPool::spawn() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    RGPU_LOG(error, "socketpair failed: %s", strerror(errno));
    return;
  }
  const pid_t daemon = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    RGPU_LOG(error, "fork failed: %s", strerror(errno));
    close(sv[0]);
    close(sv[1]);
    return;
  }
  if (pid == 0) {
    // A worker never outlives its daemon: when the server dies its clients
    // hear so at once, and a restarted server finds no stale workers.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != daemon) _exit(0);
    // The worker keeps only its channel: an inherited client socket would
    // keep that client's connection open after its own worker exits.
    if (sv[1] > 3) close_range(3, sv[1] - 1, 0);
    close_range(sv[1] + 1, ~0u, 0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    run_worker(config_, ledger_, counters_, sv[1]);
  }
  close(sv[1]);
  waiting_.push_back(Worker{pid, sv[0], Clock::now()});
}

void WorkerPool::top_up() {
  drop_departed_clients();
  // At least one worker for each queued client that may start its hello,
  // plus the idle reserve.
  size_t want = static_cast<size_t>(config_.workers) + unauthenticated_.dispatchable();
  if (held_ || draining() || Clock::now() < retry_after_) return;
  while (waiting_.size() < want) {
    size_t before = waiting_.size();
    spawn();
    if (waiting_.size() == before) break;
  }
}

std::string WorkerPool::hand_off(int client_fd, std::string* kind) {
  // Whom it counts against: its host, or its local user.
  const std::string source = transport::peer_identity(client_fd);
  const auto now = Clock::now();
  UnauthenticatedLimits::Id id = 0;
  switch (unauthenticated_.accept(source, now, &id)) {
    case UnauthenticatedLimits::Verdict::queued:
      break;
    case UnauthenticatedLimits::Verdict::over_source_bound:
      *kind = "over the bound of one source";
      return "too many connections of " + source + " are not yet authenticated (max-unauthenticated-per-client " +
             std::to_string(config_.max_unauthenticated_per_client) + "): try again later";
    case UnauthenticatedLimits::Verdict::over_total_bound:
      *kind = "over the bound of all sources";
      return "too many connections are not yet authenticated (max-unauthenticated " +
             std::to_string(config_.max_unauthenticated) + "): try again later";
  }
  if (std::string why = unservable_reason(); !why.empty()) {
    unauthenticated_.finished(id);
    *kind = draining() ? "draining" : "no worker starts";
    return why;
  }
  pending_.push_back(Queued{client_fd, now, id});
  dispatch();
  top_up();
  return "";
}

void WorkerPool::enforce_hello_deadlines() {
  const auto now = Clock::now();
  for (UnauthenticatedLimits::Id id : unauthenticated_.expired_in_queue(now)) {
    auto q = std::find_if(pending_.begin(), pending_.end(), [&](const Queued& e) { return e.hello == id; });
    if (q == pending_.end()) continue;
    warnings_.log(log::Level::info, "expired in queue",
                  "closed a queued connection: no worker was free for it within its hello deadline");
    close(q->fd);
    pending_.erase(q);
    unauthenticated_.finished(id);
  }
  for (UnauthenticatedLimits::Id id : unauthenticated_.overdue_in_hello(now)) {
    auto w = std::find_if(serving_.begin(), serving_.end(), [&](const Serving& e) { return e.hello == id; });
    unauthenticated_.finished(id);
    if (w == serving_.end()) continue;
    w->hello = 0;
    // Still our unreaped child (reap() forgets it first).
    if (kill(w->pid, SIGKILL) == 0)
      warnings_.warn("overdue hello", "killed worker %d: its client's hello outlasted hello-timeout", w->pid);
  }
}

std::vector<int> WorkerPool::channels() const {
  std::vector<int> out;
  for (const Worker& w : waiting_) out.push_back(w.channel);
  for (const Serving& w : serving_) out.push_back(w.channel);
  return out;
}

void WorkerPool::admit(Serving& w) {
  auto identity = read_admission_request(w.channel);
  if (!identity) {
    // The session is over (its worker exits) or its worker misbehaves.
    forget_serving(w.pid);
    return;
  }
  // Authenticated now: admitted or refused, it holds no unauthenticated slot.
  unauthenticated_.finished(w.hello);
  w.hello = 0;
  std::string refusal;
  const size_t limit = static_cast<size_t>(config_.max_sessions_per_client);
  const auto admitted = static_cast<size_t>(
      std::count_if(serving_.begin(), serving_.end(), [](const Serving& o) { return !o.identity.empty(); }));
  if (!w.identity.empty()) {
    refusal = "a session asks admission once";
  } else if (config_.max_sessions > 0 && admitted >= static_cast<size_t>(config_.max_sessions)) {
    refusal = "the server is serving its most sessions at once (max-sessions " + std::to_string(config_.max_sessions) +
              "): try again later";
    RGPU_LOG(warn, "refused a session of %s: %d sessions at once is the limit", printable(*identity).c_str(),
             config_.max_sessions);
  } else if (limit > 0 && static_cast<size_t>(std::count_if(serving_.begin(), serving_.end(), [&](const Serving& o) {
                             return o.identity == *identity;
                           })) >= limit) {
    refusal = "this client (" + *identity + ") has its most sessions at once (max-sessions-per-client " +
              std::to_string(limit) + ")";
    RGPU_LOG(warn, "refused a session of %s: %zu at once is the limit", printable(*identity).c_str(), limit);
  } else {
    w.identity = *identity;
  }
  answer_admission(w.channel, refusal);
}

void WorkerPool::forget_serving(pid_t pid) {
  auto it = std::find_if(serving_.begin(), serving_.end(), [&](const Serving& w) { return w.pid == pid; });
  if (it == serving_.end()) return;
  unauthenticated_.finished(it->hello);
  close(it->channel);
  serving_.erase(it);
}

void WorkerPool::on_channel_readable(int channel) {
  if (auto s = std::find_if(serving_.begin(), serving_.end(), [&](const Serving& w) { return w.channel == channel; });
      s != serving_.end()) {
    admit(*s);
    return;
  }
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Worker& w) { return w.channel == channel; });
  if (it == waiting_.end()) return;
  char message[512];
  const ssize_t got = read(channel, message, sizeof message);
  if (got > 0 && message[0] == 'r') {
    it->ready = true;
    start_failure_.clear();
    const double took = std::chrono::duration<double>(Clock::now() - it->forked).count();
    counters_.worker_started(took);
    RGPU_LOG(info, "worker %d ready after %.3f s", it->pid, took);
    dispatch();
    return;
  }
  // The worker failed or died while starting: its exit is logged by reap().
  // Only a failure it explains turns clients away; one killed while starting
  // (out of memory, say) may well be followed by one that starts.
  if (got > 1 && message[0] == 'f') start_failure_ = printable(std::string_view(message + 1, got - 1), 400);
  retry_after_ = Clock::now() + std::chrono::seconds(2);
  close(it->channel);
  waiting_.erase(it);
}

std::string WorkerPool::unservable_reason() const {
  if (draining()) return drain_why_;
  if (start_failure_.empty() || std::any_of(waiting_.begin(), waiting_.end(), [](const Worker& w) { return w.ready; }))
    return "";
  return "rgpu-server cannot start a worker: " + start_failure_;
}

std::vector<int> WorkerPool::take_unservable(std::string* why) {
  std::vector<int> out;
  *why = unservable_reason();
  if (why->empty()) return out;
  for (const Queued& q : pending_) {
    unauthenticated_.finished(q.hello);
    out.push_back(q.fd);
  }
  pending_.clear();
  return out;
}

void WorkerPool::drop_departed_clients() {
  if (pending_.empty()) return;
  std::vector<pollfd> fds;
  for (const Queued& q : pending_) fds.push_back({q.fd, POLLRDHUP, 0});
  if (poll(fds.data(), fds.size(), 0) <= 0) return;
  for (const pollfd& p : fds) {
    if (!(p.revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
    warnings_.log(log::Level::info, "left in queue", "a client left before a worker was free for it");
    std::erase_if(pending_, [&](const Queued& q) {
      if (q.fd != p.fd) return false;
      unauthenticated_.finished(q.hello);
      return true;
    });
    close(p.fd);
  }
}

void WorkerPool::dispatch() {
  drop_departed_clients();
  for (;;) {
    auto next = unauthenticated_.next_to_dispatch();
    if (!next) return;
    auto it = std::find_if(waiting_.begin(), waiting_.end(), [](const Worker& w) { return w.ready; });
    if (it == waiting_.end()) return;
    auto q = std::find_if(pending_.begin(), pending_.end(), [&](const Queued& e) { return e.hello == *next; });
    if (q == pending_.end()) {  // cannot be: every queued id is pending
      unauthenticated_.finished(*next);
      continue;
    }
    const Queued taken = *q;
    pending_.erase(q);
    counters_.client_waited(std::chrono::duration<double>(Clock::now() - taken.accepted).count());
    bool ok = send_fd(it->channel, taken.fd);
    close(taken.fd);
    if (ok) {
      unauthenticated_.dispatched(taken.hello, Clock::now());
      serving_.push_back(Serving{it->pid, it->channel, taken.hello, {}});
      RGPU_LOG(debug, "session handed to worker %d", it->pid);
    } else {
      unauthenticated_.finished(taken.hello);
      close(it->channel);
    }
    waiting_.erase(it);
  }
}

void WorkerPool::reap() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    ledger_.session_ended(pid);
    forget_serving(pid);
    // One this pool stopped (stop_all_workers, drain) did not crash.
    const bool stopped_here = std::erase(stopping_, pid) > 0;
    remove_ipc_records_of(pid);
    if (stopped_here)
      RGPU_LOG(debug, "worker %d stopped", pid);
    else if (WIFSIGNALED(status))
      RGPU_LOG(warn, "worker %d killed by signal %d", pid, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
      RGPU_LOG(warn, "worker %d exited with status %d", pid, WEXITSTATUS(status));
    else
      RGPU_LOG(debug, "worker %d finished", pid);
  }
}

void WorkerPool::stop_due_workers() {
  // Still our unreaped children (reap() forgets them first), so no pid here
  // can be another process's.
  for (pid_t pid : ledger_.workers_of_ended_jobs())
    if (kill(pid, SIGKILL) == 0) RGPU_LOG(info, "stopped worker %d: its job ended", pid);
  if (!stop_serving_at_ || Clock::now() < *stop_serving_at_) return;
  stop_serving_at_.reset();
  for (const Serving& w : serving_)
    if (kill(w.pid, SIGKILL) == 0) {
      RGPU_LOG(warn, "stopped worker %d and its session: %s", w.pid, stop_why_.c_str());
      stopping_.push_back(w.pid);
    }
}

void WorkerPool::stop_idle_workers(const char* why) {
  // Forgotten at once, not taken for failed starts (which would hold back
  // their replacements).
  for (const Worker& w : waiting_) {
    if (kill(w.pid, SIGKILL) == 0) {
      RGPU_LOG(warn, "stopped idle worker %d: %s", w.pid, why);
      stopping_.push_back(w.pid);
    }
    close(w.channel);
  }
  waiting_.clear();
}

void WorkerPool::stop_all_workers(const char* why, std::chrono::milliseconds grace) {
  held_ = true;
  stop_why_ = why;
  stop_idle_workers(why);
  stop_serving_at_ = Clock::now() + grace;
  stop_due_workers();
}

bool WorkerPool::stopped() const { return held_ && waiting_.empty() && serving_.empty() && stopping_.empty(); }

void WorkerPool::drain(std::string why) {
  drain_why_ = std::move(why);
  stop_idle_workers("draining");
}

bool WorkerPool::drained() const { return draining() && waiting_.empty() && serving_.empty() && stopping_.empty(); }

void WorkerPool::resume() {
  held_ = false;
  retry_after_ = {};
}

void WorkerPool::shutdown() {
  for (const Worker& w : waiting_) {
    kill(w.pid, SIGTERM);
    close(w.channel);
  }
  waiting_.clear();
  for (const Serving& w : serving_) {
    close(w.channel);
    unauthenticated_.finished(w.hello);
  }
  serving_.clear();
  for (const Queued& q : pending_) {
    close(q.fd);
    unauthenticated_.finished(q.hello);
  }
  pending_.clear();
}

}  // namespace rgpu::server
