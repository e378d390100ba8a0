// cuMemcpyBatchAsync: the runtime's batch (cudart/batch_copy.cpp);
// CUmemcpyAttributes is cudaMemcpyAttributes.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "client/cuda/driver_errors.hpp"
#include "client/cudart/batch_copy.hpp"

using namespace rgpu::client;

namespace {

static_assert(sizeof(CUmemcpyAttributes) == sizeof(cudaMemcpyAttributes));
static_assert(sizeof(CUdeviceptr) == sizeof(void*));

CUresult batch(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
               size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream hStream) {
  return through_runtime([&] {
    return copy_batch(reinterpret_cast<void* const*>(dsts), reinterpret_cast<const void* const*>(srcs), sizes, count,
                      reinterpret_cast<const cudaMemcpyAttributes*>(attrs), attrsIdxs, numAttrs,
                      reinterpret_cast<cudaStream_t>(hStream), failIdx);
  });
}

}  // namespace

extern "C" CUresult CUDAAPI cuMemcpyBatchAsync_v2(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                                  CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                                  CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, nullptr, hStream);
}

// The CUDA 12.8 binding, which also names the copy that failed.
extern "C" CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                               CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                               size_t* failIdx, CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream);
}
