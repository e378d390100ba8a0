// cuPointerGetAttribute, answered from the client's memory map as
// cudaPointerGetAttributes is: device memory by the server that holds it,
// page-locked host memory by the client.
#include "client/cuda/cuda_api.hpp"

#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/primary_context.hpp"
#include "client/cudart/managed_memory.hpp"
#include "client/cudart/mapped_memory.hpp"

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto device = MemoryMap::get().find_device(ptr);
  auto host = device ? std::nullopt : MemoryMap::get().find_host(ptr);
  // Memory CUDA never saw.
  if (!device && !host) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = primary_context(device ? device->device : Runtime::current_device());
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<CUmemorytype*>(data) = device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      // Page-locked memory has a device address only where the GPU maps it (shm).
      if (!device) {
        auto mapped = mapped_device_address(ptr);
        if (!mapped) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<CUdeviceptr*>(data) = *mapped;
        return CUDA_SUCCESS;
      }
      *static_cast<CUdeviceptr*>(data) = ptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (!host) return CUDA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = device ? device->device : Runtime::current_device();
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = device ? device->base : host->base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = device ? device->size : host->size;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<bool*>(data) = find_managed(ptr).has_value();
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
  }
}
