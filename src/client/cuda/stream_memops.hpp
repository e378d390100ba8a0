// Stream memory operations in their wire form (proto::MemOpWire), shared by
// cuStreamBatchMemOp, graph batch memory-operation nodes and the runtime's
// waits across servers.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <span>

#include "protocol/codec.hpp"

namespace rgpu::client {

// Appends `p` to `w`; its address must be device memory of `device`, aligned
// to the width it touches, else cudaErrorInvalidValue (so is an unknown type).
cudaError_t put_mem_op(const CUstreamBatchMemOpParams& p, int device, proto::Writer& w);
// Posts `ops` as one batch to the stream's server (no driver-initialisation
// check: the runtime's own callers need none).
cudaError_t post_mem_ops(cudaStream_t stream, std::span<const CUstreamBatchMemOpParams> ops, unsigned flags);

}  // namespace rgpu::client
