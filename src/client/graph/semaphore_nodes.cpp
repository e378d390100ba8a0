#include "client/graph/semaphore_nodes.hpp"

#include <map>
#include <mutex>
#include <vector>

namespace rgpu::client {
namespace {

struct Arrays {
  std::vector<cudaExternalSemaphore_t> sems;
  std::vector<cudaExternalSemaphoreSignalParams> signal;
  std::vector<cudaExternalSemaphoreWaitParams> wait;
};

std::mutex g_mutex;

std::map<cudaGraphNode_t, Arrays>& arrays() {
  static auto* m = new std::map<cudaGraphNode_t, Arrays>;
  return *m;
}

}  // namespace

cudaExternalSemaphoreSignalNodeParams node_signal_params(cudaGraphNode_t node, int device,
                                                         const proto::GraphNodeParams& p) {
  std::lock_guard lock(g_mutex);
  Arrays& a = arrays()[node];
  from_semaphore_ops(p.semaphores, device, &a.sems, &a.signal);
  return {a.sems.data(), a.signal.data(), static_cast<unsigned>(a.sems.size())};
}

cudaExternalSemaphoreWaitNodeParams node_wait_params(cudaGraphNode_t node, int device,
                                                     const proto::GraphNodeParams& p) {
  std::lock_guard lock(g_mutex);
  Arrays& a = arrays()[node];
  from_semaphore_ops(p.semaphores, device, &a.sems, &a.wait);
  return {a.sems.data(), a.wait.data(), static_cast<unsigned>(a.sems.size())};
}

}  // namespace rgpu::client
