// CUDA arrays and mipmapped arrays: server objects behind client records
// (array_objects.hpp); their descriptions are answered from the records.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/array_objects.hpp"
#include "protocol/channel_format.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

cudaError_t create_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned flags) {
  if (!array || !desc) return cudaErrorInvalidValue;
  Call call(proto::kOpArrayCreate);
  if (cudaError_t e = call.to_current_device()) return e;
  call.args().put(*desc).put(extent).put<uint32_t>(flags);
  if (cudaError_t e = call.run()) return e;
  uint64_t remote = call.reply().get<uint64_t>();
  *array = arrays().add({call.device_index(), remote, *desc, extent, flags, proto::channel_element_size(*desc), nullptr});
  return cudaSuccess;
}

}  // namespace

extern "C" cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                                       size_t height, unsigned int flags) {
  return api([&] { return create_array(array, desc, {width, height, 0}, flags); });
}

extern "C" cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                                         unsigned int flags) {
  return api([&] { return create_array(array, desc, extent, flags); });
}

extern "C" cudaError_t cudaFreeArray(cudaArray_t array) {
  return api([&]() -> cudaError_t {
    if (!array) return cudaSuccess;
    auto a = arrays().find(array);
    if (!a || a->owner) return cudaErrorInvalidResourceHandle;
    Call call(proto::kOpArrayDestroy);
    int32_t remote_device;
    if (cudaError_t e = call.to_device(a->device, &remote_device)) return e;
    call.args().put<uint64_t>(a->remote);
    cudaError_t e = call.run();
    arrays().remove(array);
    return e;
  });
}

extern "C" cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* mipmap, const cudaChannelFormatDesc* desc,
                                                cudaExtent extent, unsigned int levels, unsigned int flags) {
  return api([&]() -> cudaError_t {
    if (!mipmap || !desc) return cudaErrorInvalidValue;
    Call call(proto::kOpMipmappedArrayCreate);
    if (cudaError_t e = call.to_current_device()) return e;
    call.args().put(*desc).put(extent).put<uint32_t>(flags).put<uint32_t>(levels);
    if (cudaError_t e = call.run()) return e;
    uint64_t remote = call.reply().get<uint64_t>();
    unsigned made = call.reply().get<uint32_t>();
    *mipmap = mipmapped_arrays().add({call.device_index(), remote, *desc, extent, flags, made});
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmap) {
  return api([&]() -> cudaError_t {
    if (!mipmap) return cudaSuccess;
    auto m = mipmapped_arrays().find(mipmap);
    if (!m) return cudaErrorInvalidResourceHandle;
    Call call(proto::kOpMipmappedArrayDestroy);
    int32_t remote_device;
    if (cudaError_t e = call.to_device(m->device, &remote_device)) return e;
    call.args().put<uint64_t>(m->remote);
    cudaError_t e = call.run();
    for (cudaArray_t level : arrays().select([&](const ArrayObject& a) { return a.owner == mipmap; }))
      arrays().remove(level);
    mipmapped_arrays().remove(mipmap);
    return e;
  });
}

extern "C" cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t* level_array, cudaMipmappedArray_const_t mipmap,
                                                  unsigned int level) {
  return api([&]() -> cudaError_t {
    if (!level_array) return cudaErrorInvalidValue;
    auto handle = const_cast<cudaMipmappedArray_t>(mipmap);
    auto m = mipmapped_arrays().find(handle);
    if (!m) return cudaErrorInvalidResourceHandle;
    Call call(proto::kOpMipmappedArrayGetLevel);
    int32_t remote_device;
    if (cudaError_t e = call.to_device(m->device, &remote_device)) return e;
    call.args().put<uint64_t>(m->remote).put<uint32_t>(level);
    if (cudaError_t e = call.run()) return e;
    uint64_t remote = call.reply().get<uint64_t>();
    auto extent = call.reply().get<cudaExtent>();
    // Asking twice for a level gives the same array, as in CUDA.
    auto known = arrays().select([&](const ArrayObject& a) { return a.owner == handle && a.remote == remote; });
    *level_array = !known.empty() ? known.front()
                                  : arrays().add({m->device, remote, m->format, extent, m->flags,
                                                  proto::channel_element_size(m->format), handle});
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags,
                                        cudaArray_t array) {
  return api([&]() -> cudaError_t {
    auto a = arrays().find(array);
    if (!a) return cudaErrorInvalidResourceHandle;
    if (desc) *desc = a->format;
    if (extent) *extent = a->extent;
    if (flags) *flags = a->flags;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  return api([&]() -> cudaError_t {
    if (!desc) return cudaErrorInvalidValue;
    auto a = arrays().find(const_cast<cudaArray_t>(array));
    if (!a) return cudaErrorInvalidResourceHandle;
    *desc = a->format;
    return cudaSuccess;
  });
}

// rgpu makes only single-plane formats (proto::channel_element_size), and
// refuses sparse and deferred-mapping arrays: for every array it holds, CUDA
// answers these three with cudaErrorInvalidValue.
extern "C" cudaError_t cudaArrayGetPlane(cudaArray_t* plane, cudaArray_t array, unsigned int) {
  return api([&]() -> cudaError_t {
    if (!plane) return cudaErrorInvalidValue;
    return arrays().find(array) ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle;
  });
}

extern "C" cudaError_t cudaArrayGetSparseProperties(cudaArraySparseProperties* properties, cudaArray_t array) {
  return api([&]() -> cudaError_t {
    if (!properties) return cudaErrorInvalidValue;
    return arrays().find(array) ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle;
  });
}

extern "C" cudaError_t cudaMipmappedArrayGetSparseProperties(cudaArraySparseProperties* properties,
                                                             cudaMipmappedArray_t mipmap) {
  return api([&]() -> cudaError_t {
    if (!properties) return cudaErrorInvalidValue;
    return mipmapped_arrays().find(mipmap) ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle;
  });
}

extern "C" cudaError_t cudaArrayGetMemoryRequirements(cudaArrayMemoryRequirements* requirements, cudaArray_t array,
                                                      int) {
  return api([&]() -> cudaError_t {
    if (!requirements) return cudaErrorInvalidValue;
    return arrays().find(array) ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle;
  });
}

extern "C" cudaError_t cudaMipmappedArrayGetMemoryRequirements(cudaArrayMemoryRequirements* requirements,
                                                               cudaMipmappedArray_t mipmap, int) {
  return api([&]() -> cudaError_t {
    if (!requirements) return cudaErrorInvalidValue;
    return mipmapped_arrays().find(mipmap) ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle;
  });
}
