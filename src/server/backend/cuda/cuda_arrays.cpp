#include "server/backend/cuda/cuda_arrays.hpp"

#include <cuda_runtime_api.h>

namespace rgpu::server {
namespace {

cudaArray_t array_of(uint64_t h) { return reinterpret_cast<cudaArray_t>(h); }
cudaMipmappedArray_t mipmap_of(uint64_t h) { return reinterpret_cast<cudaMipmappedArray_t>(h); }

// Fills one side of cudaMemcpy3DParms.
void describe(const CopySide& side, cudaArray_t* array, cudaPitchedPtr* ptr, cudaPos* pos) {
  if (side.array)
    *array = array_of(side.array);
  else
    *ptr = {side.ptr, side.pitch, side.pitch, side.rows};
  *pos = side.pos;
}

}  // namespace

int32_t CudaArrays::array_create(const ArraySpec& spec, uint64_t* array) {
  cudaArray_t a = nullptr;
  cudaError_t e = cudaMalloc3DArray(&a, &spec.format, spec.extent, spec.flags);
  *array = reinterpret_cast<uint64_t>(a);
  return e;
}

int32_t CudaArrays::array_destroy(uint64_t array) { return cudaFreeArray(array_of(array)); }

int32_t CudaArrays::mipmapped_array_create(const ArraySpec& spec, unsigned levels, uint64_t* mipmap) {
  cudaMipmappedArray_t m = nullptr;
  cudaError_t e = cudaMallocMipmappedArray(&m, &spec.format, spec.extent, levels, spec.flags);
  *mipmap = reinterpret_cast<uint64_t>(m);
  return e;
}

int32_t CudaArrays::mipmapped_array_destroy(uint64_t mipmap) { return cudaFreeMipmappedArray(mipmap_of(mipmap)); }

int32_t CudaArrays::mipmapped_array_level(uint64_t mipmap, unsigned level, uint64_t* array) {
  cudaArray_t a = nullptr;
  cudaError_t e = cudaGetMipmappedArrayLevel(&a, mipmap_of(mipmap), level);
  *array = reinterpret_cast<uint64_t>(a);
  return e;
}

int32_t array_element_size(uint64_t array, size_t* element) {
  cudaChannelFormatDesc desc;
  cudaExtent extent;
  unsigned flags;
  if (cudaError_t e = cudaArrayGetInfo(&desc, &extent, &flags, array_of(array))) return e;
  *element = (desc.x + desc.y + desc.z + desc.w) / 8;
  return *element ? cudaSuccess : cudaErrorInvalidValue;
}

int32_t copy_3d_parms(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind kind,
                      cudaMemcpy3DParms* p) {
  *p = cudaMemcpy3DParms{};
  describe(src, &p->srcArray, &p->srcPtr, &p->srcPos);
  describe(dst, &p->dstArray, &p->dstPtr, &p->dstPos);
  p->extent = extent;
  p->kind = kind;
  // Backend positions on a pointer side are bytes; CUDA counts them in the
  // array's elements when an array takes part.
  if ((p->srcArray != nullptr) != (p->dstArray != nullptr)) {
    size_t element;
    if (int32_t e = array_element_size(src.array ? src.array : dst.array, &element)) return e;
    cudaPos& pos = p->srcArray ? p->dstPos : p->srcPos;
    if (pos.x % element) return cudaErrorInvalidValue;
    pos.x /= element;
  }
  return cudaSuccess;
}

int32_t CudaArrays::memcpy3d_async(const CopySide& dst, const CopySide& src, cudaExtent extent, cudaMemcpyKind kind,
                                   uint64_t stream) {
  cudaMemcpy3DParms p;
  if (int32_t e = copy_3d_parms(dst, src, extent, kind, &p)) return e;
  return cudaMemcpy3DAsync(&p, reinterpret_cast<cudaStream_t>(stream));
}

int32_t CudaArrays::texture_create(uint64_t* texture, const cudaResourceDesc& resource,
                                   const cudaTextureDesc& texture_desc, const cudaResourceViewDesc* view) {
  cudaTextureObject_t t = 0;
  cudaError_t e = cudaCreateTextureObject(&t, &resource, &texture_desc, view);
  *texture = t;
  return e;
}

int32_t CudaArrays::texture_destroy(uint64_t texture) { return cudaDestroyTextureObject(texture); }

int32_t CudaArrays::surface_create(uint64_t* surface, const cudaResourceDesc& resource) {
  cudaSurfaceObject_t o = 0;
  cudaError_t e = cudaCreateSurfaceObject(&o, &resource);
  *surface = o;
  return e;
}

int32_t CudaArrays::surface_destroy(uint64_t surface) { return cudaDestroySurfaceObject(surface); }

}  // namespace rgpu::server
