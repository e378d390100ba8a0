// Event timing across a session move (docs/migration.md). A move makes each
// event again on the target, unrecorded, so cudaEventElapsedTime with an
// event recorded before the move would fail there. The move measures, for
// each timed event recorded on the old server, how long before an anchor
// event recorded on the new one (just after the switch) it happened; the
// old server's clock up to the move, the client's across the pause. Elapsed
// times with such an event are then reckoned from the anchor. An event
// recorded again keeps its own time; a graph launch, which may record
// events the client does not see, drops every moved time.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

namespace rgpu::client {

class MovedEventTimes {
 public:
  static MovedEventTimes& get();
  // The move of `device`: its anchor (an event of the client's own) and
  // the events' times, in ms before it. Replaces the device's earlier ones.
  void moved(int device, cudaEvent_t anchor, std::map<cudaEvent_t, float> ms_before);
  // How long before its device's anchor `event` happened; none when it
  // carries no moved time.
  std::optional<float> before_anchor(cudaEvent_t event) const;
  // The device's anchor, if a move left one.
  std::optional<cudaEvent_t> anchor(int device) const;
  // The event was recorded again, or destroyed.
  void recorded(cudaEvent_t event);
  // Lock-free while no move left a time.
  void graph_launched();

 private:
  struct Moved {
    int device;
    float ms_before;
  };
  mutable std::mutex mutex_;
  std::map<cudaEvent_t, Moved> times_;
  std::map<int, cudaEvent_t> anchors_;
  std::atomic<bool> any_{false};
};

class Session;

// The move point: an event recorded on the old server once the pause has
// stopped its work, when, and how long before it each timed event of the
// device happened.
struct MovePoint {
  std::chrono::steady_clock::time_point at;
  std::map<cudaEvent_t, float> ms_before;
};
MovePoint measure_event_times(Session& from, int remote, int device);
// After the commit: an anchor recorded on the target, and each event's time
// counted from it, the pause between the two reckoned by this process.
// Never refuses: without an anchor the times are lost, and elapsed times
// with those events fail as for events never recorded.
void anchor_event_times(Session& to, int gpu, int device, MovePoint point);

}  // namespace rgpu::client
