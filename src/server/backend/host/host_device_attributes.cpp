#include "server/backend/host/host_device_attributes.hpp"

#include <cuda.h>

#include <algorithm>
#include <climits>

namespace rgpu::server {

namespace {

int clamp(size_t v) { return static_cast<int>(std::min<size_t>(v, INT_MAX)); }

}  // namespace

// Attributes of features the model lacks read 0, as the driver reports them
// for a GPU without the feature; sizes and limits are an H100's.
bool host_device_attribute(const cudaDeviceProp& p, int attribute, int* value) {
  if (attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return false;
  int v = 0;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = p.maxThreadsPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = p.maxThreadsDim[0]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = p.maxThreadsDim[1]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = p.maxThreadsDim[2]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = p.maxGridSize[0]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = p.maxGridSize[1]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = p.maxGridSize[2]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = clamp(p.sharedMemPerBlock); break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = clamp(p.totalConstMem); break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = p.warpSize; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = clamp(p.memPitch); break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = p.regsPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1'980'000; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: v = clamp(p.textureAlignment); break;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = p.multiProcessorCount; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = p.canMapHostMemory; break;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: v = 131072; break;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: v = 131072; break;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: v = 16384; break;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: v = 512; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = p.concurrentKernels; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = p.pciBusID; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = p.pciDeviceID; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = p.pciDomainID; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 2'619'000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = p.l2CacheSize; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = p.maxThreadsPerMultiProcessor; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = p.asyncEngineCount; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = p.unifiedAddressing; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: v = clamp(p.texturePitchAlignment); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = p.major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = p.minor; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = clamp(p.sharedMemPerMultiprocessor); break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = p.regsPerMultiprocessor; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = p.managedMemory; break;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: v = 2; break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: v = p.pageableMemoryAccess; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = p.concurrentManagedAccess; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = clamp(p.sharedMemPerBlockOptin); break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = p.maxBlocksPerMultiProcessor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: v = p.l2CacheSize / 2; break;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: v = 128 << 20; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: v = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; break;
    default: break;
  }
  *value = v;
  return true;
}

}  // namespace rgpu::server
