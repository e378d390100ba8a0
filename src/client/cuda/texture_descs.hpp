// The driver's texture descriptors (CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC,
// CUDA_RESOURCE_VIEW_DESC) as the runtime's and back, as NVIDIA's runtime
// maps them onto the driver: resource types, address and filter modes and
// view formats share their numbering; the runtime's flag fields are the
// driver's CU_TRSF_* bits; its read mode is the driver's
// CU_TRSF_READ_AS_INTEGER, which only integer formats heed.
#pragma once
#include <cuda_runtime_api.h>

#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

// False for a resource type or format rgpu does not handle.
bool to_runtime(const CUDA_RESOURCE_DESC& d, cudaResourceDesc* out);
void to_driver(const cudaResourceDesc& r, CUDA_RESOURCE_DESC* out);
// `format` is the resource's channel format: it decides the read mode.
cudaTextureDesc to_runtime(const CUDA_TEXTURE_DESC& t, const cudaChannelFormatDesc& format);
CUDA_TEXTURE_DESC to_driver(const cudaTextureDesc& r, const cudaChannelFormatDesc& format);
cudaResourceViewDesc to_runtime(const CUDA_RESOURCE_VIEW_DESC& v);
CUDA_RESOURCE_VIEW_DESC to_driver(const cudaResourceViewDesc& v);

}  // namespace rgpu::client
