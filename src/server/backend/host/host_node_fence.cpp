#include "server/backend/host/host_node_fence.hpp"

namespace rgpu::server {

void HostNodeFence::began(int device) {
  std::lock_guard lock(mutex_);
  ++running_[device];
}

void HostNodeFence::ended(int device) {
  std::lock_guard lock(mutex_);
  --running_[device];
  ended_.notify_all();
}

void HostNodeFence::await(int device) {
  std::unique_lock lock(mutex_);
  ended_.wait(lock, [&] { return running_[device] == 0; });
}

}  // namespace rgpu::server
