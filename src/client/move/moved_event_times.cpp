#include "client/move/moved_event_times.hpp"

#include <iterator>

namespace rgpu::client {

MovedEventTimes& MovedEventTimes::get() {
  static auto* t = new MovedEventTimes;
  return *t;
}

void MovedEventTimes::moved(int device, cudaEvent_t anchor, std::map<cudaEvent_t, float> ms_before) {
  std::lock_guard lock(mutex_);
  std::erase_if(times_, [&](const auto& t) { return t.second.device == device; });
  for (const auto& [event, ms] : ms_before) times_[event] = {device, ms};
  anchors_[device] = anchor;
  any_.store(true, std::memory_order_release);
}

std::optional<float> MovedEventTimes::before_anchor(cudaEvent_t event) const {
  if (!any_.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto it = times_.find(event);
  if (it == times_.end()) return std::nullopt;
  return it->second.ms_before;
}

std::optional<cudaEvent_t> MovedEventTimes::anchor(int device) const {
  std::lock_guard lock(mutex_);
  auto it = anchors_.find(device);
  if (it == anchors_.end()) return std::nullopt;
  return it->second;
}

void MovedEventTimes::recorded(cudaEvent_t event) {
  if (!any_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  times_.erase(event);
}

void MovedEventTimes::graph_launched() {
  if (!any_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  times_.clear();
}

}  // namespace rgpu::client
