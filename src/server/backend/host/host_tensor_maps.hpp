// TEST BACKEND part: tensor maps. The arguments are checked as the driver
// documents cuTensorMapEncode* to require, and an accepted tensor is written
// into the 128-byte descriptor as a plain record of its arguments (no GPU
// reads it here), so equal arguments give equal descriptors and
// cuTensorMapReplaceAddress changes exactly the address.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "protocol/wire_enum.hpp"

namespace rgpu::server::host_tensor_maps {

// The arguments every kind of tensor map has; enums as the numbers the
// client sent, checked here.
struct Tensor {
  proto::EnumNumber<CUtensorMapDataType> type;
  cuuint32_t rank;
  void* address;
  const cuuint64_t* dims;
  const cuuint64_t* strides;
  const cuuint32_t* element_strides;
  proto::EnumNumber<CUtensorMapInterleave> interleave;
  proto::EnumNumber<CUtensorMapSwizzle> swizzle;
  proto::EnumNumber<CUtensorMapL2promotion> l2;
  proto::EnumNumber<CUtensorMapFloatOOBfill> oob;
};

// Each returns CUDA_SUCCESS or CUDA_ERROR_INVALID_VALUE.
int32_t encode_tiled(CUtensorMap* map, const Tensor& t, const cuuint32_t* box);
int32_t encode_im2col(CUtensorMap* map, const Tensor& t, const int* lower, const int* upper,
                      cuuint32_t channels, cuuint32_t pixels);
int32_t encode_im2col_wide(CUtensorMap* map, const Tensor& t, int lower_w, int upper_w, cuuint32_t channels,
                           cuuint32_t pixels, proto::EnumNumber<CUtensorMapIm2ColWideMode> mode);
int32_t replace_address(CUtensorMap* map, void* address);

}  // namespace rgpu::server::host_tensor_maps
