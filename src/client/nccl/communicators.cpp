#include "client/nccl/communicators.hpp"

#include <mutex>
#include <unordered_set>

#include "client/nccl/bridge.hpp"
#include "client/nccl/errors.hpp"

namespace rgpu::nccl {
namespace {

std::mutex g_mutex;
// Never destroyed: the application may end communicators from exit handlers.
auto* g_live = new std::unordered_set<ncclComm_t>;

}  // namespace

ncclComm_t make_comm(int device, int rank, int nranks) {
  const client::FrontEndBridge* b = bridge();
  const void* server = nullptr;
  int ordinal = 0;
  if (!b || b->device_server(device, &server, &ordinal) != 0) {
    fail(ncclInvalidArgument, "device %d is not one of the application's GPUs", device);
    return nullptr;
  }
  auto* c = new ncclComm{device, server, ordinal, rank, nranks};
  std::lock_guard lock(g_mutex);
  g_live->insert(c);
  return c;
}

ncclComm_t find_comm(ncclComm_t comm) {
  std::lock_guard lock(g_mutex);
  return g_live->contains(comm) ? comm : nullptr;
}

void forget_comm(ncclComm_t comm) {
  {
    std::lock_guard lock(g_mutex);
    if (!g_live->erase(comm)) return;
  }
  delete comm;
}

}  // namespace rgpu::nccl
