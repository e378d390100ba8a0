// Driver-API copies with a CUDA array on either side (CU_MEMORYTYPE_ARRAY).
#pragma once
#include "client/cuda/cuda_api.hpp"

namespace rgpu::client {

// cuMemcpy2D and its variants when a side is an array.
CUresult copy_2d_with_array(const CUDA_MEMCPY2D* c, CUstream stream, bool async);

}  // namespace rgpu::client
