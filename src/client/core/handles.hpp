// Client-side stream, event and memory pool objects. The application's
// cudaStream_t, cudaEvent_t and cudaMemPool_t point at these; they say which device (and so which server)
// owns the remote object. Registries reject handles the client never made.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <unordered_set>

namespace rgpu::client {

struct RemoteObject {
  int device;       // virtual device index
  uint64_t remote;  // the server's handle
};

template <typename Handle>
class HandleRegistry {
 public:
  Handle add(int device, uint64_t remote) {
    auto* o = new RemoteObject{device, remote};
    std::lock_guard lock(mutex_);
    live_.insert(o);
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
  // The handle of the server object (device, remote), made on first sight:
  // servers hand out their device pools as often as asked.
  Handle intern(int device, uint64_t remote) {
    std::lock_guard lock(mutex_);
    for (RemoteObject* o : live_)
      if (o->device == device && o->remote == remote) return reinterpret_cast<Handle>(o);
    auto* o = new RemoteObject{device, remote};
    live_.insert(o);
    return reinterpret_cast<Handle>(o);
  }
  bool remove(Handle h) {
    auto* o = reinterpret_cast<RemoteObject*>(h);
    std::lock_guard lock(mutex_);
    if (live_.erase(o) == 0) return false;
    delete o;
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<RemoteObject*> live_;
};

HandleRegistry<cudaStream_t>& streams();
HandleRegistry<cudaEvent_t>& events();
HandleRegistry<cudaMemPool_t>& mem_pools();

// Default-stream handles (0, cudaStreamLegacy, cudaStreamPerThread) are
// passed to the server as they are.
inline bool is_default_stream(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

}  // namespace rgpu::client
