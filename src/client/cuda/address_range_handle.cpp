// cuMemGetHandleForAddressRange: a dma-buf descriptor of device memory,
// made by the server's driver and handed to the application beside the
// reply, so only where the server is on the application's host (shm).
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuMemGetHandleForAddressRange(void* handle, CUdeviceptr dptr, size_t size,
                                                          CUmemRangeHandleType handleType,
                                                          unsigned long long flags) {
  if (CUresult e = driver_ready()) return e;
  if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || size == 0) return CUDA_ERROR_INVALID_VALUE;
  KeepLastError keep;
  auto range = MemoryMap::get().find_device(dptr, size);
  if (!range) return CUDA_ERROR_INVALID_VALUE;
  Call call(proto::kOpMemGetHandleForAddressRange);
  int32_t ordinal;
  if (cudaError_t e = call.to_device(range->device, &ordinal)) return to_cu(e);
  if (cudaError_t e = call.descriptors_travel("cuMemGetHandleForAddressRange")) return to_cu(e);
  call.args().put<uint64_t>(dptr).put<uint64_t>(size).put<int32_t>(handleType).put<uint64_t>(flags);
  int fd = -1;
  if (cudaError_t e = call.run_taking_fd(&fd)) return to_cu(e);
  *static_cast<int*>(handle) = fd;
  return CUDA_SUCCESS;
}
