// cudaMemPoolAttr values travel as 64-bit integers; these are the attributes
// whose C type is cuuint64_t (the others are int).
#pragma once
#include <cuda_runtime_api.h>

namespace rgpu::proto {

inline bool pool_attribute_is_64_bit(cudaMemPoolAttr attr) {
  return attr == cudaMemPoolAttrReleaseThreshold || attr == cudaMemPoolAttrReservedMemCurrent ||
         attr == cudaMemPoolAttrReservedMemHigh || attr == cudaMemPoolAttrUsedMemCurrent ||
         attr == cudaMemPoolAttrUsedMemHigh;
}

}  // namespace rgpu::proto
