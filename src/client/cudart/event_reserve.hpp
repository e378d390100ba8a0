// Server events made ahead of need. Frameworks create events on hot paths
// (PyTorch: two per collective, more per stream hand-over), and a creation
// answered by the server is a round trip that also waits for every call
// queued before it. So events are made in batches, and each creation after
// the first of a batch is answered here with a fresh, never-recorded event
// of the same device, context and flags.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "protocol/wire.hpp"

namespace rgpu::client {

class EventReserve {
 public:
  // Events one creation asks the server for.
  static constexpr uint32_t kBatch = 8;
  static_assert(kBatch <= proto::kMaxEventBatch);

  static EventReserve& get();
  // A spare event of the device (virtual index), the header device of the
  // call (ordinal and green context) and flags; false when none is left.
  bool take(int device, uint16_t wire_device, unsigned flags, uint64_t* remote);
  void put(int device, uint16_t wire_device, unsigned flags, uint64_t remote);
  // After a device reset: the server has destroyed its spares.
  void forget_device(int device);

 private:
  std::mutex mutex_;
  std::map<std::tuple<int, uint16_t, unsigned>, std::vector<uint64_t>> spares_;
};

}  // namespace rgpu::client
