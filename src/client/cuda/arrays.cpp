// CUDA arrays and mipmapped arrays of the driver API, on the runtime's
// paths: a CUarray is the runtime's cudaArray_t, a CUmipmappedArray its
// cudaMipmappedArray_t.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include "client/cuda/array_formats.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

cudaArray_t rt(CUarray a) { return reinterpret_cast<cudaArray_t>(a); }
cudaMipmappedArray_t rt(CUmipmappedArray m) { return reinterpret_cast<cudaMipmappedArray_t>(m); }

// CUDA_ARRAY3D_* flags are the runtime's cudaArray* flags, bit for bit.
CUresult create_3d(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* d) {
  if (!handle || !d) return CUDA_ERROR_INVALID_VALUE;
  cudaChannelFormatDesc desc;
  if (!to_channel_desc(d->Format, d->NumChannels, &desc)) return CUDA_ERROR_INVALID_VALUE;
  return through_runtime([&] {
    return cudaMalloc3DArray(reinterpret_cast<cudaArray_t*>(handle), &desc, {d->Width, d->Height, d->Depth}, d->Flags);
  });
}

CUresult describe(CUarray array, CUDA_ARRAY3D_DESCRIPTOR* out) {
  cudaChannelFormatDesc desc;
  cudaExtent extent;
  unsigned flags;
  if (CUresult e = through_runtime([&] { return cudaArrayGetInfo(&desc, &extent, &flags, rt(array)); })) return e;
  unsigned channels = 0;
  to_array_format(desc, &out->Format, &channels);
  out->NumChannels = channels;
  out->Width = extent.width;
  out->Height = extent.height;
  out->Depth = extent.depth;
  out->Flags = flags;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult CUDAAPI cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d3{d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
  return create_3d(pHandle, &d3);
}

extern "C" CUresult CUDAAPI cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) {
  return create_3d(pHandle, d);
}

extern "C" CUresult CUDAAPI cuArrayDestroy(CUarray hArray) {
  if (!hArray) return CUDA_ERROR_INVALID_HANDLE;
  return through_runtime([&] { return cudaFreeArray(rt(hArray)); });
}

extern "C" CUresult CUDAAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* out, CUarray hArray) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d3;
  if (CUresult e = describe(hArray, &d3)) return e;
  *out = {d3.Width, d3.Height, d3.Format, d3.NumChannels};
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* out, CUarray hArray) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  return describe(hArray, out);
}

extern "C" CUresult CUDAAPI cuArrayGetPlane(CUarray* pPlaneArray, CUarray hArray, unsigned int planeIdx) {
  return through_runtime(
      [&] { return cudaArrayGetPlane(reinterpret_cast<cudaArray_t*>(pPlaneArray), rt(hArray), planeIdx); });
}

// The driver's structures are the runtime's, field for field.
extern "C" CUresult CUDAAPI cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* p, CUarray array) {
  return through_runtime(
      [&] { return cudaArrayGetSparseProperties(reinterpret_cast<cudaArraySparseProperties*>(p), rt(array)); });
}

extern "C" CUresult CUDAAPI cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES* p,
                                                               CUmipmappedArray mipmap) {
  return through_runtime([&] {
    return cudaMipmappedArrayGetSparseProperties(reinterpret_cast<cudaArraySparseProperties*>(p), rt(mipmap));
  });
}

extern "C" CUresult CUDAAPI cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* r, CUarray array,
                                                        CUdevice device) {
  return through_runtime([&] {
    return cudaArrayGetMemoryRequirements(reinterpret_cast<cudaArrayMemoryRequirements*>(r), rt(array), device);
  });
}

extern "C" CUresult CUDAAPI cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* r,
                                                                 CUmipmappedArray mipmap, CUdevice device) {
  return through_runtime([&] {
    return cudaMipmappedArrayGetMemoryRequirements(reinterpret_cast<cudaArrayMemoryRequirements*>(r), rt(mipmap),
                                                   device);
  });
}

extern "C" CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d,
                                                  unsigned int numMipmapLevels) {
  if (!pHandle || !d) return CUDA_ERROR_INVALID_VALUE;
  cudaChannelFormatDesc desc;
  if (!to_channel_desc(d->Format, d->NumChannels, &desc)) return CUDA_ERROR_INVALID_VALUE;
  return through_runtime([&] {
    return cudaMallocMipmappedArray(reinterpret_cast<cudaMipmappedArray_t*>(pHandle), &desc,
                                    {d->Width, d->Height, d->Depth}, numMipmapLevels, d->Flags);
  });
}

extern "C" CUresult CUDAAPI cuMipmappedArrayGetLevel(CUarray* pLevelArray, CUmipmappedArray hMipmappedArray,
                                                    unsigned int level) {
  return through_runtime([&] {
    return cudaGetMipmappedArrayLevel(reinterpret_cast<cudaArray_t*>(pLevelArray), rt(hMipmappedArray), level);
  });
}

extern "C" CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
  if (!hMipmappedArray) return CUDA_ERROR_INVALID_HANDLE;
  return through_runtime([&] { return cudaFreeMipmappedArray(rt(hMipmappedArray)); });
}
