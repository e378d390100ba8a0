// How many objects of one kind a session may hold (session_bounds.hpp).
// The tables that hold them ask before the object is made; past the limit
// the call fails with out-of-memory, as CUDA does when it runs out. The
// refusal is logged once per kind and session: a program that retries would
// otherwise fill the log.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace rgpu::server {

class CountLimit {
 public:
  // `what`: the objects, `setting`: the flag, both for the log.
  CountLimit(const char* what, const char* setting) : what_(what), setting_(setting) {}
  // 0: no limit. Set before the first object.
  void set_limit(uint64_t n) { limit_ = n; }
  uint64_t limit() const { return limit_; }
  // Whether one more may be made while `held` are. Threads asking at once
  // may each pass: the limit holds to within the session's connections.
  bool room_for_one_more(size_t held);
  // The same for the objects `table` holds, counted under its `mutex`,
  // which is let go before a refusal is logged.
  template <typename Table>
  bool room_for_one_more(std::mutex& mutex, const Table& table) {
    std::unique_lock lock(mutex);
    const size_t held = table.size();
    lock.unlock();
    return room_for_one_more(held);
  }

 private:
  const char* what_;
  const char* setting_;
  uint64_t limit_ = 0;
  std::atomic<bool> logged_{false};
};

}  // namespace rgpu::server
