// Client-side graph, graph-node and executable-graph handles. The server
// names the same node each time it lists it, so handles are interned: one
// client handle per (device, server handle). Handles the client never made
// are refused.
#pragma once
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "client/core/handles.hpp"

namespace rgpu::client {

template <typename Handle>
class InternedHandles {
 public:
  Handle intern(int device, uint64_t remote) {
    std::lock_guard lock(mutex_);
    auto& o = by_remote_[{device, remote}];
    if (!o) {
      o = new RemoteObject{device, remote};
      live_.insert(o);
    }
    return reinterpret_cast<Handle>(o);
  }
  bool find(Handle h, RemoteObject* out) const {
    std::lock_guard lock(mutex_);
    auto it = live_.find(reinterpret_cast<RemoteObject*>(h));
    if (it == live_.end()) return false;
    *out = **it;
    return true;
  }
  void forget(Handle h) {
    auto* o = reinterpret_cast<RemoteObject*>(h);
    std::lock_guard lock(mutex_);
    if (live_.erase(o) == 0) return;
    by_remote_.erase({o->device, o->remote});
    delete o;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<RemoteObject*> live_;
  std::map<std::pair<int, uint64_t>, RemoteObject*> by_remote_;
};

InternedHandles<cudaGraph_t>& graph_handles();
InternedHandles<cudaGraphNode_t>& graph_node_handles();
InternedHandles<cudaGraphExec_t>& graph_exec_handles();
InternedHandles<cudaUserObject_t>& user_object_handles();

// A handle's object, or the error CUDA gives for a bad one.
template <typename H>
cudaError_t find_handle(InternedHandles<H>& table, H h, RemoteObject* o) {
  return h && table.find(h, o) ? cudaSuccess : cudaErrorInvalidValue;
}

// The virtual device a graph or node lives on.
cudaError_t graph_device(cudaGraph_t graph, int* device);
cudaError_t node_device(cudaGraphNode_t node, int* device);

}  // namespace rgpu::client
