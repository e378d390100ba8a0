// Host nodes of graphs: the client names its callback by number; the backend
// holds a record of it (a graph may run it many times), which asks the
// client to run it through the session's HostCallbacks, with the staging
// block it moves, if it stages a copy (host_callbacks.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "server/worker/host_callbacks.hpp"

namespace rgpu::server {

class HostNodeRecords {
 public:
  explicit HostNodeRecords(HostCallbacks& callbacks) : callbacks_(callbacks) {}

  // The record of client callback `id` with `staging` (the same one each
  // time); the staging block is the caller's to have checked.
  uint64_t record(uint64_t id, const CallbackStaging& staging = {});
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
    CallbackStaging staging;
  };
  HostCallbacks& callbacks_;
  std::mutex mutex_;
  // By client id and staging block: a client naming one callback with two
  // blocks gets two records, neither of which changes under a running graph.
  std::map<std::tuple<uint64_t, char*, uint64_t, bool>, std::unique_ptr<Record>> records_;
};

}  // namespace rgpu::server
