#include "server/worker/exec_graph_copies.hpp"

namespace rgpu::server {

bool ExecGraphCopies::keep(GraphBackend& b, uint64_t exec, uint64_t graph, uint64_t flags,
                           std::span<const uint64_t> graph_nodes) {
  Copy copy;
  copy.flags = flags;
  bool made = b.graph_clone(&copy.graph, graph) == cudaSuccess;
  for (uint64_t n : graph_nodes) {
    uint64_t found = 0;
    if (made && b.find_in_clone(&found, n, copy.graph) == cudaSuccess) copy.nodes[n] = found;
  }
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
    if (n == it->second.nodes.end()) {
      it->second.stale = true;
      return;
    }
    copy_node = n->second;
  }
  if (b.set_node_params(copy_node, p) != cudaSuccess) {
    std::lock_guard lock(mutex_);
    if (auto it = copies_.find(exec); it != copies_.end()) it->second.stale = true;
  }
}

void ExecGraphCopies::set_enabled(uint64_t exec, uint64_t node, uint32_t enabled) {
  std::lock_guard lock(mutex_);
  auto it = copies_.find(exec);
  if (it == copies_.end()) return;
  if (auto n = it->second.nodes.find(node); n != it->second.nodes.end())
    it->second.enabled[n->second] = enabled;
  else
    it->second.stale = true;
}

bool ExecGraphCopies::find(uint64_t exec, Copy* out) const {
  std::lock_guard lock(mutex_);
  auto it = copies_.find(exec);
  if (it == copies_.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace rgpu::server
