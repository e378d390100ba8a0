// cudaMemcpyBatchAsync: a batch of 1-D copies in one stream. Copies within a
// batch have no order among themselves, so running them one after another,
// each as cudaMemcpyAsync with unified addressing, is one valid order; every
// access order is honoured (pageable sources are read before the call
// returns, which is what cudaMemcpySrcAccessOrderDuringApiCall asks).
#include "client/cudart/batch_copy.hpp"

#include <cstdint>

#include "client/core/api_guard.hpp"
#include "client/core/per_thread_stream.hpp"

namespace rgpu::client {

cudaError_t copy_batch(void* const* dsts, const void* const* srcs, const size_t* sizes, size_t count,
                       const cudaMemcpyAttributes* attrs, const size_t* attrs_idxs, size_t num_attrs,
                       cudaStream_t stream, size_t* fail_idx) {
  if (fail_idx) *fail_idx = SIZE_MAX;
  if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attrs_idxs || num_attrs == 0 || num_attrs > count)
    return cudaErrorInvalidValue;
  stream = effective_stream(stream);
  if (stream == nullptr || stream == cudaStreamLegacy) return cudaErrorInvalidValue;
  for (size_t k = 0; k < num_attrs; ++k) {
    if (attrs_idxs[k] >= count || (k == 0 ? attrs_idxs[k] != 0 : attrs_idxs[k] <= attrs_idxs[k - 1]))
      return cudaErrorInvalidValue;
    auto order = attrs[k].srcAccessOrder;
    if (order != cudaMemcpySrcAccessOrderStream && order != cudaMemcpySrcAccessOrderDuringApiCall &&
        order != cudaMemcpySrcAccessOrderAny)
      return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < count; ++i) {
    if (cudaError_t e = cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream)) {
      if (fail_idx) *fail_idx = i;
      return e;
    }
  }
  return cudaSuccess;
}

}  // namespace rgpu::client

extern "C" cudaError_t cudaMemcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes,
                                            size_t count, cudaMemcpyAttributes* attrs, size_t* attrsIdxs,
                                            size_t numAttrs, cudaStream_t stream) {
  return rgpu::client::api([&] {
    return rgpu::client::copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, nullptr);
  });
}
