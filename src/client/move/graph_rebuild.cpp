#include "client/move/graph_rebuild.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "client/core/memory_map.hpp"
#include "client/core/session.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/cuda/module_loading.hpp"
#include "client/graph/handles.hpp"
#include "client/graph/node_params.hpp"
#include "client/move/move_refusal.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {
namespace {

using proto::GraphImage;

using KernelAttributes = std::map<uint64_t, std::vector<std::pair<int32_t, int32_t>>>;

std::vector<MovedGraph> ask_worker(Session& from, int remote, KernelAttributes* attributes) {
  std::vector<uint8_t> reply;
  check_step(from.call(proto::kOpMoveGraphs, static_cast<uint16_t>(remote), {}, {}, reply), "the session's graphs");
  proto::Reader r(reply);
  refuse_for_reasons(r);
  std::vector<MovedGraph> graphs(r.get<uint32_t>());
  for (auto& g : graphs) {
    g.handle = r.get<uint64_t>();
    g.exec = r.get<uint8_t>();
    g.flags = r.get<uint64_t>();
    g.source = r.get<uint64_t>();
    g.image = proto::get_graph_image(r);
  }
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
    auto& set = (*attributes)[r.get<uint64_t>()];
    set.resize(r.get<uint32_t>());
    for (auto& [id, value] : set) {
      id = r.get<int32_t>();
      value = r.get<int32_t>();
    }
  }
  r.expect_end();
  return graphs;
}

// The image's kernels and host functions as the client knows them, its
// events the target's.
void name_as_known(GraphImage& image, int device, const std::map<uint64_t, uint64_t>& events_now, MovedGraphs* moved) {
  for (auto& node : image.nodes) {
    auto& p = node.params;
    if (p.type == cudaGraphNodeTypeKernel && !moved->kernels.count(p.function)) {
      GraphKernel k{ModuleRegistry::get().find_loaded(device, p.function), nullptr};
      if (!k.runtime) k.driver = DriverHandles::get().find_function(device, p.function);
      if (!k.runtime && !k.driver) throw MoveRefusal("a graph holds a kernel the client does not know");
      moved->kernels[p.function] = k;
    }
    if (p.type == cudaGraphNodeTypeEventRecord || p.type == cudaGraphNodeTypeWaitEvent) {
      auto it = events_now.find(p.handle);
      if (it == events_now.end()) throw MoveRefusal("a graph records or waits for an event the application destroyed");
      p.handle = it->second;
    }
    if (p.type == cudaGraphNodeTypeHost && !moved->host_functions.count(p.handle)) {
      GraphHostFunction f{};
      if (!node_host_function(p, &f.fn, &f.user_data))
        throw MoveRefusal("a graph's host node runs a function the client does not know");
      moved->host_functions[p.handle] = f;
    }
    for (auto& child : node.child) name_as_known(child, device, events_now, moved);
  }
}

// The kernel's function on the device's new server, its module loaded
// there, with the attributes it had set.
cudaError_t function_now(const GraphKernel& k, Session& to, int gpu, int device, uint64_t* function) {
  int32_t max_dynamic_shared = -1;
  for (const auto& [id, value] : k.attributes) {
    if (id == cudaFuncAttributeMaxDynamicSharedMemorySize) max_dynamic_shared = value;
  }
  if (k.runtime) {
    const LoadedKernel* lk = nullptr;
    if (cudaError_t e = ModuleRegistry::get().kernel_on(k.runtime, device, &lk)) return e;
    *function = lk->function;
    if (max_dynamic_shared >= 0) ModuleRegistry::get().set_max_dynamic_shared(k.runtime, device, max_dynamic_shared);
  } else {
    DriverFunction* f = DriverHandles::get().find(k.driver);
    if (!f) return cudaErrorInvalidResourceHandle;
    LoadedKernel* lk = nullptr;
    if (cudaError_t e = function_on(f, device, &lk)) return e;
    *function = lk->function;
    if (max_dynamic_shared >= 0) lk->max_dynamic_shared = max_dynamic_shared;
  }
  for (const auto& [id, value] : k.attributes) {
    proto::Writer w;
    w.put(*function).put(id).put(value);
    std::vector<uint8_t> reply;
    if (cudaError_t e = to.call(proto::kOpFuncSetAttribute, static_cast<uint16_t>(gpu), w.bytes(), {}, reply)) return e;
  }
  return cudaSuccess;
}

// What the images' device addresses name on the new server: allocations
// are where they were; module variables are where their modules load now
// (loaded at the first address in one), and a variable whose address the
// application holds is followed as everywhere.
class AddressesNow {
 public:
  AddressesNow(std::vector<std::pair<VarEntry*, LoadedVar>> vars, int device)
      : vars_(std::move(vars)), device_(device) {
    std::sort(vars_.begin(), vars_.end(),
              [](const auto& a, const auto& b) { return a.second.address < b.second.address; });
  }

  uint64_t operator()(uint64_t address) const {
    if (auto now = MemoryMap::get().device_side(address)) return *now;
    auto it = std::upper_bound(vars_.begin(), vars_.end(), address,
                               [](uint64_t a, const auto& v) { return a < v.second.address; });
    if (it == vars_.begin()) return address;
    const auto& [var, was] = *--it;
    if (address >= was.address + was.size) return address;
    const LoadedVar* now = nullptr;
    if (ModuleRegistry::get().var_on(var, device_, &now) != cudaSuccess || !now->address) {
      RGPU_LOG(error, "moved session: a graph's copy names module variable %s, which did not load again",
               var->name.c_str());
      return address;
    }
    return now->address + (address - was.address);
  }

 private:
  std::vector<std::pair<VarEntry*, LoadedVar>> vars_;
  int device_;
};

void point_at_target(GraphImage& image, const std::map<uint64_t, uint64_t>& functions,
                     const std::map<uint64_t, uint64_t>& host_functions, const AddressesNow& now) {
  for (auto& node : image.nodes) {
    auto& p = node.params;
    if (p.type == cudaGraphNodeTypeHost) {
      auto it = host_functions.find(p.handle);
      p.handle = it == host_functions.end() ? 0 : it->second;
    }
    if (p.type == cudaGraphNodeTypeKernel) {
      auto it = functions.find(p.function);
      p.function = it == functions.end() ? 0 : it->second;
      MemoryMap::get().follow_moved_variables(p.args);
    }
    if (p.type == cudaGraphNodeTypeMemset) p.dst = now(p.dst);
    if (p.type == cudaGraphNodeTypeMemcpy) {
      if (!(p.host_sides & proto::kHostDst)) p.dst = now(p.dst);
      if (!(p.host_sides & proto::kHostSrc)) p.src = now(p.src);
    }
    for (auto& child : node.child) point_at_target(child, functions, host_functions, now);
  }
}

// The graph or executable graph built on the target, and its nodes there;
// else why not ("node 3 (type 0), adding it: cudaErrorInvalidValue").
bool build(Session& to, int gpu, const MovedGraph& g, uint64_t source, uint64_t* made, std::vector<uint64_t>* nodes,
           std::string* why) {
  proto::Writer w;
  w.put<uint8_t>(g.exec).put(g.flags).put(source);
  proto::put_graph_image(w, g.image);
  std::vector<uint8_t> reply;
  if (cudaError_t e = to.call(proto::kOpGraphBuild, static_cast<uint16_t>(gpu), w.bytes(), {}, reply)) {
    *why = cudaGetErrorName(e);
    return false;
  }
  proto::Reader r(reply);
  const auto e = static_cast<cudaError_t>(r.get<int32_t>());
  const auto node = r.get<uint32_t>();
  const auto type = r.get<int32_t>();
  const auto step = r.get_string();
  if (e != cudaSuccess) {
    *why = (type < 0 ? step : "node " + std::to_string(node) + " (type " + std::to_string(type) + "), " + step) + ": " +
           cudaGetErrorName(e);
    return false;
  }
  *made = r.get<uint64_t>();
  nodes->resize(r.get<uint32_t>());
  for (auto& n : *nodes) n = r.get<uint64_t>();
  return true;
}

}  // namespace

MovedGraphs read_graphs(Session& from, int remote, int device, const std::map<uint64_t, uint64_t>& events_now,
                        std::vector<std::pair<VarEntry*, LoadedVar>> vars) {
  MovedGraphs moved;
  KernelAttributes attributes;
  moved.graphs = ask_worker(from, remote, &attributes);
  for (auto& g : moved.graphs) name_as_known(g.image, device, events_now, &moved);
  for (auto& [function, kernel] : moved.kernels) kernel.attributes = std::move(attributes[function]);
  moved.vars = std::move(vars);
  return moved;
}

void build_graphs(MovedGraphs moved, Session& to, int gpu, int device) {
  if (moved.graphs.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  std::map<uint64_t, uint64_t> functions;
  for (const auto& [was, kernel] : moved.kernels) {
    uint64_t now = 0;
    if (cudaError_t e = function_now(kernel, to, gpu, device, &now))
      RGPU_LOG(error, "moved session: a graph's kernel did not load again (%s)", cudaGetErrorName(e));
    else
      functions[was] = now;
  }
  std::map<uint64_t, uint64_t> host_functions;  // the old session's callback number -> the target's
  for (const auto& [was, f] : moved.host_functions) {
    GraphNodeParams p;
    if (cudaError_t e = host_node(device, f.fn, f.user_data, &p))
      RGPU_LOG(error, "moved session: a graph's host function is lost (%s)", cudaGetErrorName(e));
    else
      host_functions[was] = p.handle;
  }
  const auto loaded = std::chrono::steady_clock::now();
  const AddressesNow addresses(std::move(moved.vars), device);
  std::map<uint64_t, uint64_t> graphs_now, nodes_now, execs_now;
  // The application's graphs first: executable graphs name their nodes.
  std::stable_partition(moved.graphs.begin(), moved.graphs.end(), [](const MovedGraph& g) { return !g.exec; });
  for (MovedGraph& g : moved.graphs) {
    point_at_target(g.image, functions, host_functions, addresses);
    uint64_t source = 0;
    if (g.exec) {
      auto it = graphs_now.find(g.source);
      source = it == graphs_now.end() ? 0 : it->second;
      for (auto& node : g.image.nodes) {
        auto n = nodes_now.find(node.original);
        node.original = source && n != nodes_now.end() ? n->second : 0;
      }
    }
    uint64_t made = 0;
    std::vector<uint64_t> nodes;
    if (std::string why; !build(to, gpu, g, source, &made, &nodes, &why)) {
      RGPU_LOG(error, "moved session: %s 0x%llx of %zu nodes could not be made again on the target (%s)",
               g.exec ? "the executable graph" : "the graph", static_cast<unsigned long long>(g.handle),
               g.image.nodes.size(), why.c_str());
      continue;
    }
    (g.exec ? execs_now : graphs_now)[g.handle] = made;
    for (size_t i = 0; i < nodes.size() && i < g.image.nodes.size() && !g.exec; ++i)
      nodes_now[g.image.nodes[i].handle] = nodes[i];
  }
  graph_handles().rewrite(device, graphs_now);
  graph_node_handles().rewrite(device, nodes_now);
  graph_exec_handles().rewrite(device, execs_now);
  const auto ms = [](auto from, auto to) { return std::chrono::duration<double, std::milli>(to - from).count(); };
  RGPU_LOG(
      info,
      "moved session: %zu graphs and %zu executable graphs made again (%.1f ms loading their %zu kernels' modules, "
      "%.1f ms making them)",
      graphs_now.size(), execs_now.size(), ms(start, loaded), moved.kernels.size(),
      ms(loaded, std::chrono::steady_clock::now()));
}

}  // namespace rgpu::client
