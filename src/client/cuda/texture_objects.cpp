// Texture and surface objects of the driver API (and the texture size
// limit), on the runtime's paths: descriptors translated to the runtime's
// and back (texture_descs.hpp).
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include "client/cuda/array_formats.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/texture_descs.hpp"
#include "client/core/array_objects.hpp"

using namespace rgpu::client;

namespace {

// The channel format of a resource; false when it names no known array.
bool format_of(const cudaResourceDesc& r, cudaChannelFormatDesc* out) {
  switch (r.resType) {
    case cudaResourceTypeArray: {
      auto a = arrays().find(r.res.array.array);
      if (a) *out = a->format;
      return a.has_value();
    }
    case cudaResourceTypeMipmappedArray: {
      auto m = mipmapped_arrays().find(r.res.mipmap.mipmap);
      if (m) *out = m->format;
      return m.has_value();
    }
    case cudaResourceTypeLinear: *out = r.res.linear.desc; return true;
    case cudaResourceTypePitch2D: *out = r.res.pitch2D.desc; return true;
  }
  return false;
}

}  // namespace

extern "C" CUresult CUDAAPI cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                              const CUDA_TEXTURE_DESC* pTexDesc,
                                              const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  return through_runtime([&]() -> cudaError_t {
    cudaResourceDesc res;
    if (!pTexObject || !pResDesc || !pTexDesc || !to_runtime(*pResDesc, &res)) return cudaErrorInvalidValue;
    cudaChannelFormatDesc format;
    if (!format_of(res, &format)) return cudaErrorInvalidResourceHandle;
    cudaTextureDesc tex = to_runtime(*pTexDesc, format);
    cudaResourceViewDesc view;
    if (pResViewDesc) view = to_runtime(*pResViewDesc);
    return cudaCreateTextureObject(pTexObject, &res, &tex, pResViewDesc ? &view : nullptr);
  });
}

extern "C" CUresult CUDAAPI cuTexObjectDestroy(CUtexObject texObject) {
  return through_runtime([&] { return cudaDestroyTextureObject(texObject); });
}

extern "C" CUresult CUDAAPI cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  return through_runtime([&]() -> cudaError_t {
    if (!pResDesc) return cudaErrorInvalidValue;
    cudaResourceDesc res;
    if (cudaError_t e = cudaGetTextureObjectResourceDesc(&res, texObject)) return e;
    to_driver(res, pResDesc);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  return through_runtime([&]() -> cudaError_t {
    if (!pTexDesc) return cudaErrorInvalidValue;
    cudaResourceDesc res;
    cudaTextureDesc tex;
    if (cudaError_t e = cudaGetTextureObjectResourceDesc(&res, texObject)) return e;
    if (cudaError_t e = cudaGetTextureObjectTextureDesc(&tex, texObject)) return e;
    cudaChannelFormatDesc format{};
    format_of(res, &format);
    *pTexDesc = to_driver(tex, format);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc,
                                                           CUtexObject texObject) {
  return through_runtime([&]() -> cudaError_t {
    if (!pResViewDesc) return cudaErrorInvalidValue;
    cudaResourceViewDesc v;
    if (cudaError_t e = cudaGetTextureObjectResourceViewDesc(&v, texObject)) return e;
    *pResViewDesc = to_driver(v);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  return through_runtime([&]() -> cudaError_t {
    cudaResourceDesc res;
    if (!pSurfObject || !pResDesc || !to_runtime(*pResDesc, &res)) return cudaErrorInvalidValue;
    return cudaCreateSurfaceObject(pSurfObject, &res);
  });
}

extern "C" CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surfObject) {
  return through_runtime([&] { return cudaDestroySurfaceObject(surfObject); });
}

extern "C" CUresult CUDAAPI cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  return through_runtime([&]() -> cudaError_t {
    if (!pResDesc) return cudaErrorInvalidValue;
    cudaResourceDesc res;
    if (cudaError_t e = cudaGetSurfaceObjectResourceDesc(&res, surfObject)) return e;
    to_driver(res, pResDesc);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements, CUarray_format format,
                                                               unsigned numChannels, CUdevice dev) {
  cudaChannelFormatDesc desc;
  if (!to_channel_desc(format, numChannels, &desc)) return CUDA_ERROR_INVALID_VALUE;
  return through_runtime([&] { return cudaDeviceGetTexture1DLinearMaxWidth(maxWidthInElements, &desc, dev); });
}
