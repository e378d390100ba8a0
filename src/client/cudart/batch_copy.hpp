// The batch of 1-D copies behind cudaMemcpyBatchAsync and the driver's
// cuMemcpyBatchAsync (whose older binding reports the failing copy).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rgpu::client {

// fail_idx, if given, receives the index of the copy that failed, or
// SIZE_MAX when the error concerns the batch as a whole.
cudaError_t copy_batch(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                       const cudaMemcpyAttributes* attrs, const size_t* attrs_idxs, size_t num_attrs,
                       cudaStream_t stream, size_t* fail_idx);

}  // namespace rgpu::client
