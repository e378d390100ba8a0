// A moved session's graphs and executable graphs (docs/migration.md). With
// the session's calls stopped, the old worker writes each as an image
// (kOpMoveGraphs), its kernels, events and variables named as the client
// knows them; after the commit each is built on the target (kOpGraphBuild),
// where its kernels load, and the client's graph, node and executable-graph
// records take the target's handles.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "client/core/module_registry.hpp"
#include "client/cuda/cuda_api.hpp"
#include "protocol/graph_image.hpp"

namespace rgpu::client {

class Session;

struct MovedGraph {
  uint64_t handle;  // on the old server
  bool exec;
  uint64_t flags;   // an executable graph's instantiation flags
  uint64_t source;  // the graph an executable graph came from (0: gone)
  proto::GraphImage image;
};

// A kernel of a graph as the client knows it: the application's (fat
// binary) or one of a module it loaded through the driver API.
struct GraphKernel {
  KernelEntry* runtime = nullptr;
  CUfunction driver = nullptr;
  // Its attributes the graphs rely on (cudaFuncAttribute, value), set on the target too.
  std::vector<std::pair<int32_t, int32_t>> attributes;
};

// A host node's function, registered again with the target's session.
struct GraphHostFunction {
  cudaHostFn_t fn;
  void* user_data;
};

struct MovedGraphs {
  std::vector<MovedGraph> graphs;
  std::map<uint64_t, GraphKernel> kernels;               // by the old server's function
  std::map<uint64_t, GraphHostFunction> host_functions;  // by the old session's callback number
  // The module variables by their old addresses: copies in graphs name them.
  std::vector<std::pair<VarEntry*, LoadedVar>> vars;
};

// The device's graphs as the old worker has them, their events already the
// target's (`events_now`: old server handle -> target's). Refuses
// (MoveRefusal) what cannot move. Before the commit.
MovedGraphs read_graphs(Session& from, int remote, int device, const std::map<uint64_t, uint64_t>& events_now,
                        std::vector<std::pair<VarEntry*, LoadedVar>> vars);
// After the commit, on the device's new session: never refuses. A graph
// that cannot be built is logged, and its handle fails when used.
void build_graphs(MovedGraphs moved, Session& to, int gpu, int device);

}  // namespace rgpu::client
