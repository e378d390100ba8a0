#include "client/move/moved_event_times.hpp"

#include <optional>
#include <vector>

#include "client/core/handles.hpp"
#include "client/core/session.hpp"
#include "client/move/move_refusal.hpp"
#include "client/move/target_objects.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/ops.hpp"

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

namespace {

// An event made and recorded on `s`'s legacy stream, its work done (the
// device is idle during the pause): its server handle.
uint64_t record_now(Session& s, int gpu) {
  const uint64_t event =
      make_object(s, gpu, ObjectKind::event, cudaEventDefault, 0, "making an event to time the move");
  std::vector<uint8_t> reply;
  proto::Writer at;
  at.put<uint64_t>(event).put<uint64_t>(0);
  check_step(s.call(proto::kOpEventRecord, static_cast<uint16_t>(gpu), at.bytes(), {}, reply), "timing the move");
  proto::Writer sync;
  sync.put<uint64_t>(event);
  check_step(s.call(proto::kOpEventSynchronize, static_cast<uint16_t>(gpu), sync.bytes(), {}, reply),
             "timing the move");
  return event;
}

std::optional<float> elapsed(Session& s, int gpu, uint64_t from, uint64_t to) {
  proto::Writer w;
  w.put<uint64_t>(from).put<uint64_t>(to);
  std::vector<uint8_t> reply;
  if (s.call(proto::kOpEventElapsedTime, static_cast<uint16_t>(gpu), w.bytes(), {}, reply, false) != cudaSuccess)
    return std::nullopt;
  return proto::Reader(reply).get<float>();
}

// How long before `point` each timed event of the device happened: from the
// server's clock, or for a time an earlier move left, from that move's
// anchor. Events never recorded have none.
std::map<cudaEvent_t, float> times_before(Session& from, int remote, int device, uint64_t point) {
  const MovedEventTimes& moved = MovedEventTimes::get();
  std::optional<float> anchor_before;  // the last move's anchor, before the point
  if (auto anchor = moved.anchor(device)) {
    RemoteObject a;
    if (events().find(*anchor, &a)) anchor_before = elapsed(from, remote, a.remote, point);
  }
  std::map<cudaEvent_t, float> out;
  for (const auto& [handle, o] : events().on_device(device)) {
    if (o.flags & cudaEventDisableTiming) continue;
    if (auto earlier = moved.before_anchor(handle)) {
      if (anchor_before) out[handle] = *earlier + *anchor_before;
    } else if (auto ms = elapsed(from, remote, o.remote, point)) {
      out[handle] = *ms;
    }
  }
  return out;
}

}  // namespace

MovePoint measure_event_times(Session& from, int remote, int device) {
  const uint64_t point = record_now(from, remote);
  MovePoint out{std::chrono::steady_clock::now(), times_before(from, remote, device, point)};
  destroy_object(from, remote, ObjectKind::event, point);
  return out;
}

void anchor_event_times(Session& to, int gpu, int device, MovePoint point) {
  std::map<cudaEvent_t, float>& times = point.ms_before;
  const std::chrono::steady_clock::time_point point_at = point.at;
  uint64_t remote = 0;
  try {
    remote = record_now(to, gpu);
  } catch (const std::exception& e) {
    RGPU_LOG(error, "moved session: the times of events recorded before the move are lost (%s)", e.what());
    MovedEventTimes::get().moved(device, nullptr, {});
    return;
  }
  const float gap = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - point_at).count();
  for (auto& [event, ms] : times) ms += gap;
  const auto old = MovedEventTimes::get().anchor(device);
  MovedEventTimes::get().moved(device, events().add(device, remote, cudaEventDefault), std::move(times));
  RemoteObject o;
  if (old && events().find(*old, &o)) {
    destroy_object(to, gpu, ObjectKind::event, o.remote);
    events().remove(*old);
  }
}

}  // namespace rgpu::client
