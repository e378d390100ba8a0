// Element-wise arithmetic of the host-test NCCL stand-in, on nccl.h's
// datatypes (ncclDataType_t; the 8-bit floats are not supported) and
// built-in ops (ncclRedOp_t below ncclNumOps).
#pragma once
#include <cstddef>
#include <cstdint>

namespace rgpu::server {

// Bytes per element; 0 for a datatype the stand-in does not do.
size_t host_nccl_type_size(int32_t datatype);
// acc[i] = acc[i] op in[i]; ncclAvg sums (host_nccl_scale divides after).
void host_nccl_reduce(void* acc, const void* in, size_t count, int32_t datatype, int32_t op);
// buf[i] *= factor (ncclAvg's division, ncclRedOpCreatePreMulSum's scalar).
void host_nccl_scale(void* buf, size_t count, int32_t datatype, double factor);
// The scalar of ncclRedOpCreatePreMulSum, read as the datatype's value.
double host_nccl_value(const void* p, int32_t datatype);

}  // namespace rgpu::server
