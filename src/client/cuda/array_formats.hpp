// The driver's array formats (CUarray_format and a channel count) as the
// runtime's channel descriptors and back, for the formats rgpu handles
// (proto::channel_element_size).
#pragma once
#include <cuda_runtime_api.h>

#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

// False for formats rgpu does not handle.
bool to_channel_desc(CUarray_format format, unsigned channels, cudaChannelFormatDesc* out);
void to_array_format(const cudaChannelFormatDesc& desc, CUarray_format* format, unsigned* channels);

}  // namespace rgpu::client
