// What one session may make its worker hold besides memory: the size of one
// module image and the module cache's on disk, and how many of each kind of
// object it may have at once (server_config.hpp's flags; 0: no limit).
// The counts keep the worker's tables, and the driver objects behind them,
// bounded; they are generous for what real programs hold: PyTorch keeps
// about a hundred streams per GPU and caches its events, JAX/XLA loads a
// module per compiled executable and, like torch.compile, captures
// thousands of graphs.
#pragma once
#include <cstdint>

namespace rgpu::server {

struct SessionBounds {
  uint64_t max_module_bytes = uint64_t{512} << 20;  // one module image, or one link's inputs together
  uint64_t module_cache_max = uint64_t{2} << 30;    // the module cache directory, all workers together
  uint32_t max_streams = 4096;
  uint32_t max_events = 65536;
  uint32_t max_modules = 16384;      // modules and libraries
  uint32_t max_graphs = 16384;       // graphs, and apart from them executable graphs
  uint32_t max_graph_nodes = 1u << 20;  // nodes added to graphs (XLA builds its command buffers so)
  uint32_t max_allocations = 262144;
  // Each other kind a session creates: memory pools, texture and surface
  // objects, texture references, external memories and semaphores, user
  // objects, conditional handles.
  uint32_t max_objects = 16384;
};

}  // namespace rgpu::server
