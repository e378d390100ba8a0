#include "client/cudart/device_allocation.hpp"

#include "client/core/memory_map.hpp"
#include "common/log.hpp"
#include "protocol/ops.hpp"

namespace rgpu::client {

cudaError_t remember_allocation(Call& call, uint64_t ptr, size_t size, uint64_t graph) {
  MemoryMap& map = MemoryMap::get();
  if (graph ? map.add_graph_memory(ptr, size, call.device_index(), graph)
            : map.add_device(ptr, size, call.device_index()))
    return cudaSuccess;
  RGPU_LOG(error, "device %d returned address 0x%lx that another server's GPU also uses; refusing it",
           call.device_index(), static_cast<unsigned long>(ptr));
  Call undo(proto::kOpFree);
  int32_t remote;
  if (undo.to_device(call.device_index(), &remote) == cudaSuccess) {
    undo.args().put<uint64_t>(ptr);
    undo.run();
  }
  return cudaErrorMemoryAllocation;
}

}  // namespace rgpu::client
