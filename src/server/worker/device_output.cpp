#include "server/worker/device_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "common/log.hpp"

namespace rgpu::server {

bool DeviceOutput::capture() {
  int saved_err = dup(STDERR_FILENO);
  if (saved_err < 0) return false;
  int pipes[2][2];
  if (pipe2(pipes[0], O_CLOEXEC) != 0) {
    close(saved_err);
    return false;
  }
  if (pipe2(pipes[1], O_CLOEXEC) != 0) {
    close(saved_err);
    close(pipes[0][0]);
    close(pipes[0][1]);
    return false;
  }
  fflush(stdout);
  fflush(stderr);
  log::set_fd(saved_err);
  for (int i = 0; i < 2; ++i) {
    dup2(pipes[i][1], STDOUT_FILENO + i);
    close(pipes[i][1]);
    read_fd_[i] = pipes[i][0];
    fcntl(read_fd_[i], F_SETFL, O_NONBLOCK);
  }
  // Lives as long as the worker process, which ends with the session.
  drainer_ = std::thread([this] { drain_loop(); });
  drainer_.detach();
  return true;
}

void DeviceOutput::read_available() {
  char buf[16384];
  for (int i = 0; i < 2; ++i) {
    ssize_t n;
    while ((n = read(read_fd_[i], buf, sizeof buf)) > 0) {
      if (chunks_.empty() || chunks_.back().fd != i + 1) chunks_.push_back({i + 1, {}});
      chunks_.back().text.append(buf, static_cast<size_t>(n));
      pending_ = true;
    }
  }
}

void DeviceOutput::drain_loop() {
  // Keeps the pipes from filling up, which would block the printing thread
  // inside a CUDA call.
  pollfd fds[2] = {{read_fd_[0], POLLIN, 0}, {read_fd_[1], POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    std::lock_guard lock(mutex_);
    read_available();
  }
}

std::vector<DeviceOutput::Chunk> DeviceOutput::take(bool flush) {
  if (flush) {
    fflush(stdout);
    fflush(stderr);
  }
  std::lock_guard lock(mutex_);
  read_available();
  pending_ = false;
  return std::exchange(chunks_, {});
}

DeviceOutput::KernelCount& DeviceOutput::count(int device) {
  // Ordinals come from the client before they are checked: a bad one must
  // not grow the table (a session has far fewer devices).
  constexpr int kCountedDevices = 64;
  size_t i = static_cast<size_t>(std::clamp(device, 0, kCountedDevices - 1));
  if (i >= counts_.size()) counts_.resize(i + 1);
  return counts_[i];
}

void DeviceOutput::kernel_queued(int device) {
  std::lock_guard lock(counts_mutex_);
  ++count(device).queued;
}

uint64_t DeviceOutput::kernels_queued(int device) {
  std::lock_guard lock(counts_mutex_);
  return count(device).queued;
}

void DeviceOutput::printed_through(int device, uint64_t kernels_before) {
  std::lock_guard lock(counts_mutex_);
  KernelCount& c = count(device);
  c.printed = std::max(c.printed, kernels_before);
}

bool DeviceOutput::may_hold_output(int device) {
  std::lock_guard lock(counts_mutex_);
  KernelCount& c = count(device);
  return c.queued > c.printed;
}

}  // namespace rgpu::server
