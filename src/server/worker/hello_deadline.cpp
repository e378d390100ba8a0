#include "server/worker/hello_deadline.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace rgpu::server {

// One thread watches every armed deadline of the process, so that a hello
// costs no thread of its own.
class DeadlineWatch {
 public:
  static DeadlineWatch& instance() {
    // Never destroyed: a worker ends with _exit, the thread runs till then.
    static DeadlineWatch* watch = new DeadlineWatch;
    return *watch;
  }

  void arm(HelloDeadline* d) {
    std::lock_guard lock(mutex_);
    armed_.insert(d);
    changed_.notify_one();
  }

  void disarm(HelloDeadline* d) {
    std::lock_guard lock(mutex_);
    armed_.erase(d);
  }

  bool expired(const HelloDeadline* d) {
    std::lock_guard lock(mutex_);
    return d->expired_;
  }

 private:
  DeadlineWatch() { std::thread([this] { run(); }).detach(); }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (armed_.empty()) {
        changed_.wait(lock);
        continue;
      }
      auto first = std::min_element(armed_.begin(), armed_.end(),
                                    [](const HelloDeadline* a, const HelloDeadline* b) { return a->when_ < b->when_; });
      // A copy: the wait reads its time again after waking, when the
      // deadline it came from may have been disarmed and destroyed.
      const auto when = (*first)->when_;
      if (std::chrono::steady_clock::now() < when) {
        changed_.wait_until(lock, when);
        continue;
      }
      // Under the lock: the owner cannot disarm and close the descriptor
      // (letting its number be reused) meanwhile.
      ::shutdown((*first)->fd_, SHUT_RDWR);
      (*first)->expired_ = true;
      armed_.erase(first);
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<HelloDeadline*> armed_;
};

HelloDeadline::HelloDeadline(int fd, std::chrono::milliseconds timeout)
    : fd_(fd), when_(std::chrono::steady_clock::now() + timeout) {
  DeadlineWatch::instance().arm(this);
}

void HelloDeadline::disarm() { DeadlineWatch::instance().disarm(this); }

bool HelloDeadline::expired() const { return DeadlineWatch::instance().expired(this); }

}  // namespace rgpu::server
