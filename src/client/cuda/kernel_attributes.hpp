// A kernel's attributes and occupancy, asked and set through either API
// with any kernel handle (kernel_launcher.hpp), on a given device. Answers
// come from FunctionAttributeCache when kept there, so NVIDIA's libraries,
// which ask before many launches, pay one round trip per kernel; setters
// make the kernel's kept answers be forgotten.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "client/core/function_attribute_cache.hpp"

namespace rgpu::client {

// cudaErrorInvalidDeviceFunction for a handle naming no kernel; queries
// leave errors of earlier asynchronous calls pending, as a kept answer must.
cudaError_t kernel_attributes(const void* kernel, int device, cudaFuncAttributes* out);
cudaError_t kernel_occupancy(const void* kernel, int device, const OccupancyQuery& q, int* blocks);
// Dynamic shared memory a block may have with numBlocks resident per
// multiprocessor; asked each time (rare, and only CUDA 11's occupancy API).
cudaError_t kernel_available_dynamic_smem(const void* kernel, int device, int num_blocks, int block_size,
                                          size_t* bytes);

// `attribute` is a cudaFuncAttribute, the same number as the driver's
// CUfunction_attribute; `config` a cudaFuncCache (CUfunc_cache), or the
// application's cudaSharedMemConfig (CUsharedconfig) number.
cudaError_t set_kernel_attribute(const void* kernel, int device, int32_t attribute, int32_t value);
cudaError_t set_kernel_cache_config(const void* kernel, int device, int32_t config);
cudaError_t set_kernel_shared_mem_config(const void* kernel, int device, int32_t config);

}  // namespace rgpu::client
