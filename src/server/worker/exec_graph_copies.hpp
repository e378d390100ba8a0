// A copy of the graph each executable graph was made from, as the executable
// graph now runs it: what a move rebuilds the executable graph from on
// another worker (docs/migration.md). Applications destroy their graph once
// instantiated (PyTorch does) or change it afterwards, so the worker keeps
// its own, made at instantiation and at each update, and changes it with the
// executable graph's node updates. The copies are the backend's graphs; the
// application never names them.
//
// An executable graph a move built here was made from its copy: the nodes
// the application names in updates (those of the graph it made the
// executable graph from, rebuilt here too) stand for the copy's nodes.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "server/backend/graph_backend.hpp"

namespace rgpu::server {

class ExecGraphCopies {
 public:
  struct Copy {
    uint64_t graph = 0;  // the backend's copy
    uint64_t flags = 0;  // the instantiation's
    // A node of the graph the application made the executable graph from (or
    // of its child graphs) -> the copy's node.
    std::unordered_map<uint64_t, uint64_t> nodes;
    std::unordered_map<uint64_t, uint32_t> enabled;  // the copy's node -> as set on the executable graph
    bool made_from_copy = false;                     // built here by a move
    // Updated in a node the copy does not map: it no longer runs as the
    // executable graph does.
    bool stale = false;
  };

  // `exec` was made from (or updated to) `graph`: a copy of it replaces the
  // one kept, its nodes mapped to the graph's at every depth. False when the
  // backend cannot copy the graph: the executable graph then cannot move.
  bool keep(GraphBackend& b, uint64_t exec, uint64_t graph, uint64_t flags);
  // A move built `exec` here from `copy` (the copy's now).
  void adopt(uint64_t exec, Copy copy);
  void drop(GraphBackend& b, uint64_t exec);
  // The device was reset: every graph is gone.
  void clear();

  // The executable graph's node the application names as `node`.
  uint64_t exec_node(uint64_t exec, uint64_t node) const;
  // The executable graph's node got new parameters (as the backend takes
  // them) or was enabled or disabled: its copy too.
  void set_params(GraphBackend& b, uint64_t exec, uint64_t node, const GraphNodeParams& p);
  void set_enabled(uint64_t exec, uint64_t node, uint32_t enabled);

  // False when none is kept (its copy failed).
  bool find(uint64_t exec, Copy* out) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Copy> copies_;
};

}  // namespace rgpu::server
