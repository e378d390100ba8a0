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
#include <vector>

namespace rgpu::client {

struct RemoteObject {
  int device;       // virtual device index
  uint64_t remote;  // the server's handle
  // What it was made with (a stream's or event's flags, a stream's
  // priority): a session moved to another server makes it again so.
  uint32_t flags = 0;
  int32_t priority = 0;
};

// Client handles of server objects (device, remote handle). intern gives
// the one handle of an object the server names each time it lists it
// (graph nodes, device pools).
template <typename Handle>
class HandleRegistry {
 public:
  // A new handle of a server object, even one already named: a server may
  // hand out one object twice (an IPC import), each to be destroyed once.
  Handle add(int device, uint64_t remote, uint32_t flags = 0, int32_t priority = 0) {
    auto* o = new RemoteObject{device, remote, flags, priority};
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
  // The live objects of `device` with their handles, copied out.
  std::vector<std::pair<Handle, RemoteObject>> on_device(int device) const {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<Handle, RemoteObject>> out;
    for (RemoteObject* o : live_)
      if (o->device == device) out.emplace_back(reinterpret_cast<Handle>(o), *o);
    return out;
  }
  // A session moved (docs/migration.md): each object of `device` takes the
  // server handle `fresh` maps its old one to.
  void rewrite(int device, const std::map<uint64_t, uint64_t>& fresh) {
    std::lock_guard lock(mutex_);
    std::erase_if(by_remote_, [&](const auto& e) { return e.first.first == device; });
    for (RemoteObject* o : live_) {
      if (o->device != device) continue;
      if (auto it = fresh.find(o->remote); it != fresh.end()) o->remote = it->second;
      by_remote_[{device, o->remote}] = o;
    }
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
