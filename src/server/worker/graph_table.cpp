#include "server/worker/graph_table.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace rgpu::server {

void GraphTable::set_limits(uint64_t graphs, uint64_t nodes) {
  graph_limit_.set_limit(graphs);
  exec_limit_.set_limit(graphs);
  node_limit_.set_limit(nodes);
}

bool GraphTable::room_for_graph() {
  return graph_limit_.room_for_one_more(mutex_, graphs_);
}

bool GraphTable::room_for_exec() {
  return exec_limit_.room_for_one_more(mutex_, execs_);
}

bool GraphTable::room_for_node() {
  return node_limit_.room_for_one_more(mutex_, nodes_);
}

void GraphTable::set_object_limit(uint64_t n) {
  user_object_limit_.set_limit(n);
  conditional_limit_.set_limit(n);
}

bool GraphTable::room_for_user_object() {
  return user_object_limit_.room_for_one_more(mutex_, user_refs_);
}

bool GraphTable::room_for_conditional() {
  return conditional_limit_.room_for_one_more(mutex_, conditionals_);
}

void GraphTable::add_graph(uint64_t graph, uint64_t owner) {
  std::lock_guard lock(mutex_);
  graphs_.try_emplace(graph, Graph{owner, {}});
}

void GraphTable::add_bodies(uint64_t node, const std::vector<uint64_t>& bodies) {
  std::lock_guard lock(mutex_);
  for (uint64_t b : bodies) graphs_.try_emplace(b, Graph{node, {}, true});
}

bool GraphTable::conditional_body(uint64_t graph) const {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  return it != graphs_.end() && it->second.body;
}

bool GraphTable::graph(uint64_t graph) const {
  std::lock_guard lock(mutex_);
  return graphs_.count(graph) != 0;
}

bool GraphTable::own_graph(uint64_t graph) const {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  return it != graphs_.end() && it->second.owner == 0;
}

void GraphTable::set_owner(uint64_t graph, uint64_t owner) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it != graphs_.end()) it->second.owner = owner;
}

void GraphTable::move_into(uint64_t graph, uint64_t node) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;
  it->second.owner = node;
  it->second.moved = true;
}

uint64_t GraphTable::owner(uint64_t graph) const {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  return it == graphs_.end() ? 0 : it->second.owner;
}

void GraphTable::remove_graph(uint64_t graph) {
  std::lock_guard lock(mutex_);
  remove_graph_locked(graph);
}

void GraphTable::remove_graph_locked(uint64_t graph) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;
  std::vector<uint64_t> nodes(it->second.nodes.begin(), it->second.nodes.end());
  graphs_.erase(it);
  for (uint64_t n : nodes) remove_node_locked(n);
  std::erase_if(conditionals_, [&](const auto& kv) { return kv.second == graph; });
  std::erase_if(allocations_, [&](const auto& kv) { return kv.second.graph == graph; });
  for (auto& [exec, source] : execs_)
    if (source == graph) source = 0;
}

void GraphTable::add_node(uint64_t node, uint64_t graph) {
  std::lock_guard lock(mutex_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;
  it->second.nodes.insert(node);
  nodes_[node] = graph;
}

bool GraphTable::node(uint64_t node) const {
  std::lock_guard lock(mutex_);
  return nodes_.count(node) != 0;
}

bool GraphTable::node_in(uint64_t node, uint64_t graph) const {
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second == graph;
}

bool GraphTable::node_under(uint64_t node, uint64_t graph) const {
  std::lock_guard lock(mutex_);
  auto n = nodes_.find(node);
  if (n == nodes_.end()) return false;
  uint64_t g = n->second;
  while (g != graph) {
    auto entry = graphs_.find(g);
    if (entry == graphs_.end() || !(entry->second.body || entry->second.moved)) return false;
    auto conditional = nodes_.find(entry->second.owner);
    if (conditional == nodes_.end()) return false;
    g = conditional->second;
  }
  return true;
}

uint64_t GraphTable::graph_of(uint64_t node) const {
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second;
}

void GraphTable::remove_node(uint64_t node) {
  std::lock_guard lock(mutex_);
  remove_node_locked(node);
}

void GraphTable::remove_node_locked(uint64_t node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  auto g = graphs_.find(it->second);
  if (g != graphs_.end()) g->second.nodes.erase(node);
  nodes_.erase(it);
  // A child graph node takes its graph with it.
  std::vector<uint64_t> embedded;
  for (const auto& [graph, entry] : graphs_)
    if (entry.owner == node) embedded.push_back(graph);
  for (uint64_t graph : embedded) remove_graph_locked(graph);
}

void GraphTable::add_exec(uint64_t exec, uint64_t graph) {
  std::lock_guard lock(mutex_);
  execs_[exec] = graph;
}

bool GraphTable::exec(uint64_t exec) const {
  std::lock_guard lock(mutex_);
  return execs_.count(exec) != 0;
}

uint64_t GraphTable::exec_source(uint64_t exec) const {
  std::lock_guard lock(mutex_);
  auto it = execs_.find(exec);
  return it == execs_.end() ? 0 : it->second;
}

bool GraphTable::remove_exec(uint64_t exec) {
  std::lock_guard lock(mutex_);
  exec_memory_.erase(exec);
  return execs_.erase(exec) != 0;
}

void GraphTable::set_exec_memory(uint64_t exec, GraphMemoryEffect effect) {
  std::lock_guard lock(mutex_);
  if (effect.allocated.empty() && effect.freed.empty()) return;
  exec_memory_[exec] = std::move(effect);
}

GraphMemoryEffect GraphTable::exec_memory(uint64_t exec) const {
  std::lock_guard lock(mutex_);
  auto it = exec_memory_.find(exec);
  return it == exec_memory_.end() ? GraphMemoryEffect{} : it->second;
}

std::vector<uint64_t> GraphTable::own_graphs() const {
  std::lock_guard lock(mutex_);
  std::vector<uint64_t> out;
  for (const auto& [graph, entry] : graphs_)
    if (entry.owner == 0) out.push_back(graph);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> GraphTable::execs() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<uint64_t, uint64_t>> out(execs_.begin(), execs_.end());
  std::sort(out.begin(), out.end());
  return out;
}

size_t GraphTable::capturing() const {
  std::lock_guard lock(mutex_);
  return std::count_if(graphs_.begin(), graphs_.end(),
                       [](const auto& kv) { return kv.second.owner == kCapturing || kv.second.owner == kCapturedInto; });
}

size_t GraphTable::user_objects() const {
  std::lock_guard lock(mutex_);
  return user_refs_.size();
}

void GraphTable::add_conditional(uint64_t handle, uint64_t graph) {
  std::lock_guard lock(mutex_);
  conditionals_[handle] = graph;
}

bool GraphTable::conditional(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  return conditionals_.count(handle) != 0;
}

void GraphTable::add_user_refs(uint64_t object, uint64_t count) {
  std::lock_guard lock(mutex_);
  user_refs_[object] += count;
}

bool GraphTable::user_object(uint64_t object) const {
  std::lock_guard lock(mutex_);
  return user_refs_.count(object) != 0;
}

bool GraphTable::take_user_refs(uint64_t object, uint64_t count) {
  std::lock_guard lock(mutex_);
  auto it = user_refs_.find(object);
  if (it == user_refs_.end() || it->second < count) return false;
  if ((it->second -= count) == 0) user_refs_.erase(it);
  return true;
}

void GraphTable::add_allocation(uint64_t base, uint64_t graph) {
  std::lock_guard lock(mutex_);
  allocations_[base] = GraphAllocation{graph, false};
}

void GraphTable::allocation_freed_in(uint64_t base, uint64_t graph) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(base);
  if (it != allocations_.end() && it->second.graph == graph) it->second.freed_in_graph = true;
}

bool GraphTable::graph_allocation(uint64_t base) const {
  std::lock_guard lock(mutex_);
  if (allocations_.count(base)) return true;
  // Its graph may be gone while an executable graph still allocates it.
  for (const auto& [exec, effect] : exec_memory_)
    for (const auto& [allocated, size] : effect.allocated)
      if (allocated == base) return true;
  return false;
}

bool GraphTable::freed_by_its_graph(uint64_t base) const {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(base);
  return it != allocations_.end() && it->second.freed_in_graph;
}

std::vector<uint64_t> GraphTable::self_freed_allocations(uint64_t graph) const {
  std::lock_guard lock(mutex_);
  std::vector<uint64_t> bases;
  for (const auto& [base, a] : allocations_)
    if (a.graph == graph && a.freed_in_graph) bases.push_back(base);
  return bases;
}

void GraphTable::clear() {
  std::lock_guard lock(mutex_);
  allocations_.clear();
  exec_memory_.clear();
  graphs_.clear();
  nodes_.clear();
  execs_.clear();
  user_refs_.clear();
  conditionals_.clear();
}

GraphMemoryEffect memory_effect(std::span<const GraphMemoryNode> nodes) {
  struct Live {
    int count = 0;
    size_t size = 0;
  };
  std::map<uint64_t, Live> at;
  for (const GraphMemoryNode& n : nodes) {
    Live& l = at[n.base];
    if (n.frees) {
      --l.count;
    } else {
      ++l.count;
      l.size = std::max(l.size, n.size);
    }
  }
  GraphMemoryEffect effect;
  for (const auto& [base, l] : at) {
    if (l.count > 0) effect.allocated.emplace_back(base, l.size);
    if (l.count < 0) effect.freed.push_back(base);
  }
  return effect;
}

}  // namespace rgpu::server
