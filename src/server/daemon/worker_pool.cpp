#include "server/daemon/worker_pool.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "server/daemon/fd_passing.hpp"
#include "server/daemon/worker_process.hpp"

namespace rgpu::server {

void WorkerPool::spawn() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    RGPU_LOG(error, "socketpair failed: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    RGPU_LOG(error, "fork failed: %s", strerror(errno));
    close(sv[0]);
    close(sv[1]);
    return;
  }
  if (pid == 0) {
    // The worker keeps only its channel: an inherited client socket would
    // keep that client's connection open after its own worker exits.
    if (sv[1] > 3) close_range(3, sv[1] - 1, 0);
    close_range(sv[1] + 1, ~0u, 0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    run_worker(config_, ledger_, counters_, sv[1]);
  }
  close(sv[1]);
  waiting_.push_back(Worker{pid, sv[0]});
}

void WorkerPool::top_up() {
  // At least one worker for each queued client, plus the idle reserve.
  size_t want = static_cast<size_t>(config_.workers) + pending_.size();
  if (std::chrono::steady_clock::now() < retry_after_) return;
  while (waiting_.size() < want) {
    size_t before = waiting_.size();
    spawn();
    if (waiting_.size() == before) break;
  }
}

void WorkerPool::hand_off(int client_fd) {
  pending_.push_back(client_fd);
  dispatch();
  top_up();
}

std::vector<int> WorkerPool::channels() const {
  std::vector<int> out;
  for (const Worker& w : waiting_) out.push_back(w.channel);
  return out;
}

void WorkerPool::on_channel_readable(int channel) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Worker& w) { return w.channel == channel; });
  if (it == waiting_.end()) return;
  char c;
  if (read(channel, &c, 1) == 1) {
    it->ready = true;
    dispatch();
    return;
  }
  // The worker died while starting: its exit is logged by reap().
  retry_after_ = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  close(it->channel);
  waiting_.erase(it);
}

void WorkerPool::dispatch() {
  while (!pending_.empty()) {
    auto it = std::find_if(waiting_.begin(), waiting_.end(), [](const Worker& w) { return w.ready; });
    if (it == waiting_.end()) return;
    int fd = pending_.front();
    pending_.pop_front();
    bool ok = send_fd(it->channel, fd);
    close(fd);
    close(it->channel);
    if (ok) {
      ++serving_;
      RGPU_LOG(debug, "session handed to worker %d", it->pid);
    }
    waiting_.erase(it);
  }
}

void WorkerPool::reap() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    ledger_.session_ended(pid);
    bool was_waiting = std::any_of(waiting_.begin(), waiting_.end(), [&](const Worker& w) { return w.pid == pid; });
    if (!was_waiting && serving_ > 0) --serving_;
    if (WIFSIGNALED(status))
      RGPU_LOG(warn, "worker %d killed by signal %d", pid, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
      RGPU_LOG(warn, "worker %d exited with status %d", pid, WEXITSTATUS(status));
    else
      RGPU_LOG(debug, "worker %d finished", pid);
  }
}

void WorkerPool::stop_ended_jobs() {
  // Still our unreaped children (reap() forgets them first), so no pid here
  // can be another process's.
  for (pid_t pid : ledger_.workers_of_ended_jobs())
    if (kill(pid, SIGKILL) == 0) RGPU_LOG(info, "stopped worker %d: its job ended", pid);
}

void WorkerPool::shutdown() {
  for (const Worker& w : waiting_) {
    kill(w.pid, SIGTERM);
    close(w.channel);
  }
  waiting_.clear();
  for (int fd : pending_) close(fd);
  pending_.clear();
}

}  // namespace rgpu::server
