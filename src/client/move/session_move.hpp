// Moving a running application's session to another GPU, on the same
// server or another, while the application runs (docs/migration.md): its
// calls stop at a call boundary, queued work finishes, device memory is
// made again at the same addresses on the target and its contents copied,
// streams and events are made again there and the application's handles
// rewritten, modules load again there at their next use (their variables'
// contents copied), and the application's calls go on to the target.
#pragma once
#include <cstdint>
#include <string>

namespace rgpu::client {

class Session;

struct MoveOutcome {
  std::string refused;  // empty: moved
  double pause_ms = 0;  // how long the application's calls waited
  uint64_t bytes = 0;   // device memory copied
};

// Moves every device `from` serves to `target`: HOST[:PORT][/GPU] (GPU 0,
// the default port when left out), or an RGPU_DEVICES entry
// ("[transport://]host[:port]:gpu"). Refused, the session runs on where
// it was: state that cannot move (the worker's list), a target that cannot
// take it (another kind of GPU, addresses taken), or threads that do not
// reach a call boundary within 10 s.
MoveOutcome move_session(Session& from, const std::string& target);

}  // namespace rgpu::client
