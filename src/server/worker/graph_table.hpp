// The graphs, graph nodes and executable graphs a session may name: a handle
// from the wire is used only if it is here. A node belongs to one graph, a
// child graph to the node embedding it; destroying a graph forgets its nodes
// and what they embed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "server/pool/count_limit.hpp"

namespace rgpu::server {

// A graph's memory node: an allocation of `size` bytes at `base`, or a free
// of `base`.
struct GraphMemoryNode {
  uint64_t base;
  size_t size;
  bool frees;
};
struct GraphMemoryEffect {
  std::vector<std::pair<uint64_t, size_t>> allocated;
  std::vector<uint64_t> freed;
  bool operator==(const GraphMemoryEffect&) const = default;
};

class GraphTable {
 public:
  // Graphs and executable graphs held.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return graphs_.size() + execs_.size();
  }
  // owner: 0 for a graph of the application's own, the embedding node for a
  // child graph, kCapturing for the graph of a capture still going on,
  // kCapturedInto for the application's graph a capture is adding to.
  static constexpr uint64_t kCapturing = ~uint64_t{0};
  static constexpr uint64_t kCapturedInto = ~uint64_t{0} - 1;

  // How many graphs (child graphs and those being captured included), and
  // apart from them executable graphs, the session may hold; how many nodes
  // it may add to them (0: no limit).
  void set_limits(uint64_t graphs, uint64_t nodes);
  // How many user objects and conditional handles (max-session-objects).
  void set_object_limit(uint64_t n);
  // False (logged once) when a new graph, executable graph, node, user
  // object or conditional handle would pass its limit: asked before the
  // backend makes one.
  bool room_for_graph();
  bool room_for_exec();
  bool room_for_node();
  bool room_for_user_object();
  bool room_for_conditional();

  void add_graph(uint64_t graph, uint64_t owner);
  // A conditional node's body graphs: they go with the node, and captures may add to them.
  void add_bodies(uint64_t node, const std::vector<uint64_t>& bodies);
  bool graph(uint64_t graph) const;
  bool conditional_body(uint64_t graph) const;
  // The application's own graph (not a child graph, nor one being captured).
  bool own_graph(uint64_t graph) const;
  void set_owner(uint64_t graph, uint64_t owner);
  uint64_t owner(uint64_t graph) const;
  void remove_graph(uint64_t graph);

  void add_node(uint64_t node, uint64_t graph);
  bool node(uint64_t node) const;
  bool node_in(uint64_t node, uint64_t graph) const;
  // In `graph`, in a body of one of its conditional nodes or in a graph moved
  // into one of its child graph nodes, at any depth: an executable graph's
  // nodes include those (XLA's command buffers update them), not the nodes of
  // graphs copied into child graph nodes.
  bool node_under(uint64_t node, uint64_t graph) const;
  // The application's graph now belongs to child graph node `node` (cudaGraphChildGraphOwnershipMove).
  void move_into(uint64_t graph, uint64_t node);
  uint64_t graph_of(uint64_t node) const;  // 0 when unknown
  void remove_node(uint64_t node);

  void add_exec(uint64_t exec, uint64_t graph);
  bool exec(uint64_t exec) const;
  // The graph an executable graph was instantiated from (0 once destroyed).
  uint64_t exec_source(uint64_t exec) const;
  bool remove_exec(uint64_t exec);
  // What each launch of an executable graph does to the session's memory
  // (see GraphMemoryEffect): a launch allocates again what the application
  // freed of it outside the graph, and ends what it frees of other graphs.
  void set_exec_memory(uint64_t exec, GraphMemoryEffect effect);
  GraphMemoryEffect exec_memory(uint64_t exec) const;

  // Conditional handles, each made for a graph; they go with it.
  void add_conditional(uint64_t handle, uint64_t graph);
  bool conditional(uint64_t handle) const;

  // User objects, with the references the application holds: it may name an
  // object only while it holds one (graphs' references are the backend's).
  void add_user_refs(uint64_t object, uint64_t count);
  bool user_object(uint64_t object) const;
  // False when the application holds fewer than `count`.
  bool take_user_refs(uint64_t object, uint64_t count);

  // Graph allocations (allocation nodes' memory, by base address): the graph
  // that made each and whether that graph frees it too. One its graph frees
  // is that graph's alone (nothing else may free it) and ends with it; the
  // others outlive their graph until the application frees them, and a free
  // node may name them while the application has freed them (a launch of
  // their graph, or of an executable graph made from it, allocates them
  // again).
  void add_allocation(uint64_t base, uint64_t graph);
  bool graph_allocation(uint64_t base) const;
  void allocation_freed_in(uint64_t base, uint64_t graph);
  bool freed_by_its_graph(uint64_t base) const;
  // The allocations `graph` frees itself (they go with it).
  std::vector<uint64_t> self_freed_allocations(uint64_t graph) const;

  // What a move carries (graph_move_handlers.cpp): the application's own
  // graphs (neither child graphs, bodies nor captures), its executable
  // graphs with the graph each came from (0 once destroyed), the graphs of
  // captures in progress and the user objects it holds.
  std::vector<uint64_t> own_graphs() const;
  std::vector<std::pair<uint64_t, uint64_t>> execs() const;
  size_t capturing() const;
  size_t user_objects() const;

  // A device reset destroyed them all.
  void clear();

 private:
  struct Graph {
    uint64_t owner;
    std::unordered_set<uint64_t> nodes;
    bool body = false;
    bool moved = false;  // into its owner, a child graph node
  };
  void remove_graph_locked(uint64_t graph);
  void remove_node_locked(uint64_t node);

  CountLimit graph_limit_{"graphs", "max-session-graphs"};
  CountLimit exec_limit_{"executable graphs", "max-session-graphs"};
  CountLimit node_limit_{"graph nodes", "max-session-graph-nodes"};
  CountLimit user_object_limit_{"user objects", "max-session-objects"};
  CountLimit conditional_limit_{"conditional handles", "max-session-objects"};
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Graph> graphs_;
  std::unordered_map<uint64_t, uint64_t> nodes_;  // node -> graph
  std::unordered_map<uint64_t, uint64_t> execs_;  // exec -> source graph
  std::unordered_map<uint64_t, GraphMemoryEffect> exec_memory_;
  std::unordered_map<uint64_t, uint64_t> user_refs_;  // user object -> the application's references
  std::unordered_map<uint64_t, uint64_t> conditionals_;  // conditional handle -> its graph
  struct GraphAllocation {
    uint64_t graph;
    bool freed_in_graph;
  };
  std::unordered_map<uint64_t, GraphAllocation> allocations_;  // base -> its graph
};

// What each launch of a graph does to memory, from its memory nodes in any
// order: the addresses its allocations outnumber its frees at (base -> size;
// CUDA may allocate an address the graph frees again in the same graph) and
// those its frees outnumber its allocations at (another graph's memory).
GraphMemoryEffect memory_effect(std::span<const GraphMemoryNode> nodes);

}  // namespace rgpu::server
