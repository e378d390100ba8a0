#include "client/core/host_memory_model.hpp"

#include <cuda.h>

namespace rgpu::client {

const char* const kHostMemoryReach =
    "the GPU reaches the application's page-locked memory where cudaHostAlloc/cudaMallocHost/cuMemHostAlloc made "
    "it (over shm the server maps it; elsewhere it becomes device memory kept coherent in software), never memory "
    "the application registered (cudaHostRegister) outside shm, nor registered memory that is not private anonymous "
    "memory (a file's pages, shared memory, the stack)";

void adjust_host_memory_facts(cudaDeviceProp& p, bool shares_memory) {
  p.pageableMemoryAccess = 0;
  p.pageableMemoryAccessUsesHostPageTables = 0;
  p.canUseHostPointerForRegisteredMem = 0;
  p.hostNativeAtomicSupported = 0;
  // Managed and mapped memory are coherent in software there.
  if (!shares_memory) p.concurrentManagedAccess = 0;
}

std::optional<int> host_memory_attribute(cudaDeviceAttr attr, bool shares_memory) {
  switch (attr) {
    case cudaDevAttrPageableMemoryAccess:
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
    case cudaDevAttrHostNativeAtomicSupported:
    // CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: this process can never
    // call a function in a remote GPU's memory.
    case cudaDevAttrReserved129:
      return 0;
    case cudaDevAttrConcurrentManagedAccess:
      if (!shares_memory) return 0;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

int descriptor_handle_attribute(cudaDeviceAttr attr, int value, bool shares_memory) {
  return !shares_memory && static_cast<int>(attr) == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED ? 0 : value;
}

}  // namespace rgpu::client
