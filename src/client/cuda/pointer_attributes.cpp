// cuPointerGetAttribute, answered from the client's memory map as
// cudaPointerGetAttributes is: device memory by the server that holds it,
// page-locked host memory by the client.
#include "client/cuda/cuda_api.hpp"

#include <cstring>

#include "client/core/memory_map.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/primary_context.hpp"
#include "client/cudart/managed_memory.hpp"
#include "client/cudart/mapped_memory.hpp"
#include "protocol/wire_enum.hpp"

using namespace rgpu::client;

extern "C" CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  auto device = MemoryMap::get().find_device(ptr);
  auto host = MemoryMap::get().find_host(ptr);
  // Both: host memory the GPU reaches at its own address (coherent device
  // memory over tcp, mapped in place over shm), of its device all the same;
  // unless another server's device memory merely has the same address.
  if (device && host && mapped_device_address(ptr) != ptr) host = std::nullopt;
  // Memory CUDA never saw.
  if (!device && !host) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = primary_context(device ? device->device : Runtime::current_device());
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<CUmemorytype*>(data) = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      // Page-locked memory's device address: where the GPU maps it, else,
      // as under unified addressing, its host address (which launches
      // promote); registered memory has none.
      if (host) {
        auto mapped = page_locked_device_address(*host, ptr);
        if (!mapped) return CUDA_ERROR_INVALID_VALUE;
        *static_cast<CUdeviceptr*>(data) = *mapped;
        return CUDA_SUCCESS;
      }
      *static_cast<CUdeviceptr*>(data) = ptr;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      // Managed memory has one address on host and device.
      if (!host && !find_managed(ptr)) return CUDA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = device ? device->device : Runtime::current_device();
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = host ? host->base : device->base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = host ? host->size : device->size;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      // Unique among live allocations, which is what the driver promises
      // (cuFFT keys its plans' buffers by it).
      *static_cast<unsigned long long*>(data) = host ? host->base : device->base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      *static_cast<bool*>(data) = true;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      // Four bytes, as NVIDIA's runtime reads it (seen from a static build).
      *static_cast<unsigned*>(data) = find_managed(ptr).has_value();
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
  }
}

namespace {

// Bytes cuPointerGetAttribute writes for each attribute (cuda.h), so that
// cuPointerGetAttributes can give the ones a pointer has no value for the
// NULL value it documents; 0: not an attribute.
size_t attribute_size(rgpu::proto::EnumNumber<CUpointer_attribute> a) {
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return sizeof(CUcontext);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return sizeof(CUmemorytype);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return sizeof(void*);
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: return sizeof(unsigned);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return sizeof(bool);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return sizeof(int);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: return sizeof(CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return sizeof(CUmemoryPool);
  }
  return 0;
}

}  // namespace

// Each attribute as cuPointerGetAttribute answers it. Unlike it, a pointer
// CUDA never saw is no error: every attribute gets its NULL value but the
// host pointer, the address itself (NVIDIA's runtime reports that for
// pageable memory); so does an attribute the pointer has no value for (a
// host pointer of device memory). An attribute rgpu cannot answer fails the call with
// CUDA_ERROR_NOT_SUPPORTED rather than pass for NULL.
extern "C" CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes,
                                                   void** data, CUdeviceptr ptr) {
  if (numAttributes && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numAttributes; ++i)
    if (attribute_size(rgpu::proto::enum_number(attributes[i])) == 0 || !data[i]) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  bool known = MemoryMap::get().find_device(ptr) || MemoryMap::get().find_host(ptr);
  for (unsigned i = 0; i < numAttributes; ++i) {
    CUresult e = known ? cuPointerGetAttribute(data[i], attributes[i], ptr) : CUDA_ERROR_INVALID_VALUE;
    if (e == CUDA_ERROR_INVALID_VALUE && attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
      *static_cast<int*>(data[i]) = CU_DEVICE_INVALID;  // the driver's "no device" (measured on the H100)
    } else if (!known && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
      *static_cast<void**>(data[i]) = reinterpret_cast<void*>(ptr);
    } else if (e == CUDA_ERROR_INVALID_VALUE) {
      std::memset(data[i], 0, attribute_size(rgpu::proto::enum_number(attributes[i])));
    } else if (e != CUDA_SUCCESS) {
      return e;
    }
  }
  return CUDA_SUCCESS;
}
