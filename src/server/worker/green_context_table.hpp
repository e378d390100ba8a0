// A session's green contexts, resource descriptors and device resources.
// Resources are structs the application copies by value; the driver keeps
// private data in them, so the client gets each with a token in place of
// that data and hands the token back, and the driver only ever sees the
// structs it made itself. Green contexts go by slot: the frame header's
// device field names the slot of the context a call runs in (session_loop).
#pragma once
#include <cuda.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "server/worker/handle_set.hpp"

namespace rgpu::server {

class GreenContextTable {
 public:
  // Green contexts made.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return std::count_if(greens_.begin(), greens_.end(), [](const Green& g) { return g.handle != 0; });
  }
  static constexpr uint16_t kSlots = 255;  // slot 0 is the device's primary context
  static constexpr size_t kMaxResources = 1 << 16;

  struct Green {
    uint64_t handle = 0;  // the backend's
    int device = -1;      // server ordinal
  };

  // The client's copy of a resource: the struct with its token in place of
  // the driver's private bytes; 0 when the table is full.
  uint64_t add_resource(const CUdevResource& r, CUdevResource* client_copy);
  bool find_resource(uint64_t token, CUdevResource* out) const;

  HandleSet descs;

  // The slot of a new green context, 0 when all are taken.
  uint16_t add_green(Green g);
  bool find_green(uint16_t slot, Green* out) const;
  bool remove_green(uint16_t slot);
  // The slot holding the backend's green context `handle`, 0 if none.
  uint16_t slot_of(uint64_t handle) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> token_of_;  // by the resource's bytes
  std::map<uint64_t, CUdevResource> resources_;
  uint64_t next_token_ = 1;
  std::array<Green, kSlots + 1> greens_{};
  uint16_t last_slot_ = 0;
};

}  // namespace rgpu::server
