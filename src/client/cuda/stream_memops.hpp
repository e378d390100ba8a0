// One stream memory operation in its wire form (proto::MemOpWire), shared by
// cuStreamBatchMemOp and graph batch memory-operation nodes.
#pragma once
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include "protocol/codec.hpp"

namespace rgpu::client {

// Appends `p` to `w`; its address must be device memory of `device`, aligned
// to the width it touches, else cudaErrorInvalidValue (so is an unknown type).
cudaError_t put_mem_op(const CUstreamBatchMemOpParams& p, int device, proto::Writer& w);

}  // namespace rgpu::client
