#include "client/cudart/event_reserve.hpp"

namespace rgpu::client {

EventReserve& EventReserve::get() {
  static auto* reserve = new EventReserve;
  return *reserve;
}

bool EventReserve::take(int device, uint16_t wire_device, unsigned flags, uint64_t* remote) {
  std::lock_guard lock(mutex_);
  auto it = spares_.find({device, wire_device, flags});
  if (it == spares_.end() || it->second.empty()) return false;
  *remote = it->second.back();
  it->second.pop_back();
  return true;
}

void EventReserve::put(int device, uint16_t wire_device, unsigned flags, uint64_t remote) {
  std::lock_guard lock(mutex_);
  spares_[{device, wire_device, flags}].push_back(remote);
}

void EventReserve::forget_device(int device) {
  std::lock_guard lock(mutex_);
  std::erase_if(spares_, [&](const auto& e) { return std::get<0>(e.first) == device; });
}

}  // namespace rgpu::client
