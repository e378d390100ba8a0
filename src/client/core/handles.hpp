// Client-side handles of server objects (streams, events, memory pools, and
// the graph objects of client/graph/handles.hpp). The application's handle
// points at one of these; it says which device (and so which server) owns
// the remote object. Registries reject handles the client never made.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_set>
#include <utility>

namespace rgpu::client {

struct RemoteObject {
  int device;       // virtual device index
  uint64_t remote;  // the server's handle
};

// Client handles of server objects (device, remote handle). intern gives
// the one handle of an object the server names each time it lists it
// (graph nodes, device pools).
template <typename Handle>
class HandleRegistry {
 public:
  // A new handle of a server object, even one already named: a server may
  // hand out one object twice (an IPC import), each to be destroyed once.
  Handle add(int device, uint64_t remote) {
    auto* o = new RemoteObject{device, remote};
    std::lock_guard lock(mutex_);
    live_.insert(o);
    by_remote_.emplace(std::pair{device, remote}, o);
    return reinterpret_cast<Handle>(o);
  }
  // Copies out the object; false when h is not a live handle of ours.
  bool find(Handle h, RemoteObject* out) const {
    std::lock_guard lock(mutex_);
    auto it = live_.find(reinterpret_cast<RemoteObject*>(h));
    if (it == live_.end()) return false;
    *out = **it;
    return true;
  }
  // The handle of the server object (device, remote), made on first sight.
  Handle intern(int device, uint64_t remote) {
    std::lock_guard lock(mutex_);
    auto& o = by_remote_[{device, remote}];
    if (!o) {
      o = new RemoteObject{device, remote};
      live_.insert(o);
    }
    return reinterpret_cast<Handle>(o);
  }
  bool remove(Handle h) {
    auto* o = reinterpret_cast<RemoteObject*>(h);
    std::lock_guard lock(mutex_);
    if (live_.erase(o) == 0) return false;
    if (auto it = by_remote_.find({o->device, o->remote}); it != by_remote_.end() && it->second == o)
      by_remote_.erase(it);
    delete o;
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<RemoteObject*> live_;
  std::map<std::pair<int, uint64_t>, RemoteObject*> by_remote_;
};

// A handle's object, or the error CUDA gives for a bad one.
template <typename H>
cudaError_t find_handle(HandleRegistry<H>& table, H h, RemoteObject* o) {
  return h && table.find(h, o) ? cudaSuccess : cudaErrorInvalidValue;
}

HandleRegistry<cudaStream_t>& streams();
HandleRegistry<cudaEvent_t>& events();
HandleRegistry<cudaMemPool_t>& mem_pools();

// Default-stream handles (0, cudaStreamLegacy, cudaStreamPerThread) are
// passed to the server as they are.
inline bool is_default_stream(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

}  // namespace rgpu::client
