// Host nodes of graphs: the client names its callback by number; the backend
// holds a record of it (a graph may run it many times), which asks the
// client to run it through the session's HostCallbacks.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "server/worker/host_callbacks.hpp"

namespace rgpu::server {

class HostNodeRecords {
 public:
  explicit HostNodeRecords(HostCallbacks& callbacks) : callbacks_(callbacks) {}

  // The record of client callback `id` (the same one each time).
  uint64_t record(uint64_t id);
  // Callback numbers start at 1.
  static bool valid(uint64_t id) { return id != 0; }
  // The client's number of a record (from a node the backend describes).
  static uint64_t id(uint64_t record);
  // A backend HostNodeRunner: runs the record's callback in the client.
  static void run(uint64_t record);

 private:
  struct Record {
    HostCallbacks* callbacks;
    uint64_t id;
  };
  HostCallbacks& callbacks_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, std::unique_ptr<Record>> records_;  // by client id
};

}  // namespace rgpu::server
