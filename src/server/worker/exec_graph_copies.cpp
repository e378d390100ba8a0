#include "server/worker/exec_graph_copies.hpp"

#include <vector>

#include "common/log.hpp"

namespace rgpu::server {

namespace {

// The copy no longer runs as its executable graph does; said once, so that
// a move's refusal can be traced to the update.
void mark_stale(ExecGraphCopies::Copy& copy, uint64_t exec, uint64_t node, const char* why) {
  if (!copy.stale)
    RGPU_LOG(info, "executable graph %#llx: its copy cannot follow the update of node %#llx (%s); it cannot move",
             static_cast<unsigned long long>(exec), static_cast<unsigned long long>(node), why);
  copy.stale = true;
}

// The copy's node for each node of `graph` at every depth: the top level's by
// the driver's lookup, those of child graphs by their place (a copy lists a
// child graph's nodes in its original's order; where the kinds differ, the
// copy cannot follow updates there and is stale).
void map_nodes(GraphBackend& b, uint64_t graph, uint64_t copied, bool top, ExecGraphCopies::Copy* copy) {
  std::vector<uint64_t> nodes, copied_nodes;
  if (b.nodes(graph, &nodes) || (!top && (b.nodes(copied, &copied_nodes) || copied_nodes.size() != nodes.size()))) {
    copy->stale = true;
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint64_t found = 0;
    int32_t type = 0, found_type = 0;
    if (top ? b.find_in_clone(&found, nodes[i], copied) != cudaSuccess : !(found = copied_nodes[i])) continue;
    if (b.node_type(nodes[i], &type) || b.node_type(found, &found_type) || type != found_type) {
      copy->stale = true;
      continue;
    }
    copy->nodes[nodes[i]] = found;
    uint64_t child = 0, copied_child = 0;
    if (type == cudaGraphNodeTypeGraph && !b.child_graph(nodes[i], &child) && !b.child_graph(found, &copied_child))
      map_nodes(b, child, copied_child, false, copy);
  }
}

}  // namespace

bool ExecGraphCopies::keep(GraphBackend& b, uint64_t exec, uint64_t graph, uint64_t flags) {
  Copy copy;
  copy.flags = flags;
  const bool made = b.graph_clone(&copy.graph, graph) == cudaSuccess;
  if (made) map_nodes(b, graph, copy.graph, true, &copy);
  drop(b, exec);
  if (!made) return false;
  std::lock_guard lock(mutex_);
  copies_[exec] = std::move(copy);
  return true;
}

void ExecGraphCopies::adopt(uint64_t exec, Copy copy) {
  std::lock_guard lock(mutex_);
  copies_[exec] = std::move(copy);
}

void ExecGraphCopies::drop(GraphBackend& b, uint64_t exec) {
  uint64_t graph = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = copies_.find(exec);
    if (it == copies_.end()) return;
    graph = it->second.graph;
    copies_.erase(it);
  }
  b.graph_destroy(graph);
}

void ExecGraphCopies::clear() {
  std::lock_guard lock(mutex_);
  copies_.clear();
}

uint64_t ExecGraphCopies::exec_node(uint64_t exec, uint64_t node) const {
  std::lock_guard lock(mutex_);
  auto it = copies_.find(exec);
  if (it == copies_.end() || !it->second.made_from_copy) return node;
  auto n = it->second.nodes.find(node);
  return n == it->second.nodes.end() ? node : n->second;
}

void ExecGraphCopies::set_params(GraphBackend& b, uint64_t exec, uint64_t node, const GraphNodeParams& p) {
  uint64_t copy_node = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = copies_.find(exec);
    if (it == copies_.end()) return;
    auto n = it->second.nodes.find(node);
    if (n == it->second.nodes.end()) return mark_stale(it->second, exec, node, "a node the copy does not map");
    copy_node = n->second;
  }
  if (b.set_node_params(copy_node, p) != cudaSuccess) {
    std::lock_guard lock(mutex_);
    if (auto it = copies_.find(exec); it != copies_.end())
      mark_stale(it->second, exec, node, "the copy's node refused the parameters");
  }
}

void ExecGraphCopies::set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) {
  std::lock_guard lock(mutex_);
  auto it = copies_.find(exec);
  if (it == copies_.end()) return;
  if (auto n = it->second.nodes.find(node); n != it->second.nodes.end())
    it->second.enabled[n->second] = enabled;
  else
    mark_stale(it->second, exec, node, "enabling a node the copy does not map");
}

bool ExecGraphCopies::find(uint64_t exec, Copy* out) const {
  std::lock_guard lock(mutex_);
  auto it = copies_.find(exec);
  if (it == copies_.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace rgpu::server
