// Texture and surface objects. Their descriptors go to the server with
// arrays named by the server's handles; the object value comes back as the
// GPU made it, since kernels use it as it is. The descriptors the
// application gave are kept for the Get*Desc queries.
#include <cuda_runtime_api.h>

#include "client/core/api_guard.hpp"
#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/core/array_objects.hpp"
#include "protocol/ops.hpp"

using namespace rgpu;
using namespace rgpu::client;

namespace {

// The descriptor as the server must see it, and the device that owns the
// resource.
cudaError_t to_remote(const cudaResourceDesc& r, cudaResourceDesc* out, int* device) {
  *out = r;
  switch (r.resType) {
    case cudaResourceTypeArray: {
      auto a = arrays().find(r.res.array.array);
      if (!a) return cudaErrorInvalidResourceHandle;
      out->res.array.array = reinterpret_cast<cudaArray_t>(a->remote);
      *device = a->device;
      return cudaSuccess;
    }
    case cudaResourceTypeMipmappedArray: {
      auto m = mipmapped_arrays().find(r.res.mipmap.mipmap);
      if (!m) return cudaErrorInvalidResourceHandle;
      out->res.mipmap.mipmap = reinterpret_cast<cudaMipmappedArray_t>(m->remote);
      *device = m->device;
      return cudaSuccess;
    }
    case cudaResourceTypeLinear:
    case cudaResourceTypePitch2D: {
      void* p = r.resType == cudaResourceTypeLinear ? r.res.linear.devPtr : r.res.pitch2D.devPtr;
      auto range = MemoryMap::get().find_device(reinterpret_cast<uint64_t>(p));
      if (!range) return cudaErrorInvalidValue;
      *device = range->device;
      return cudaSuccess;
    }
  }
  return cudaErrorInvalidValue;
}

cudaError_t create_object(uint16_t op, unsigned long long* object, const cudaResourceDesc* resource,
                          const cudaTextureDesc* texture, const cudaResourceViewDesc* view) {
  cudaResourceDesc remote;
  int device;
  if (cudaError_t e = to_remote(*resource, &remote, &device)) return e;
  Call call(op);
  int32_t remote_device;
  if (cudaError_t e = call.to_device(device, &remote_device)) return e;
  call.args().put(remote);
  if (texture) {
    call.args().put(*texture).put<uint8_t>(view != nullptr);
    if (view) call.args().put(*view);
  }
  if (cudaError_t e = call.run()) return e;
  *object = call.reply().get<uint64_t>();
  TextureObject record{device, *resource, texture ? *texture : cudaTextureDesc{}, std::nullopt};
  if (view) record.view = *view;
  (texture ? texture_objects() : surface_objects()).add(*object, record);
  return cudaSuccess;
}

cudaError_t destroy_object(uint16_t op, ObjectValues& objects, uint64_t object) {
  auto r = objects.find(object);
  if (!r) return cudaErrorInvalidValue;
  Call call(op);
  int32_t remote_device;
  if (cudaError_t e = call.to_device(r->device, &remote_device)) return e;
  call.args().put<uint64_t>(object);
  cudaError_t e = call.run();
  objects.remove(object, r->device);
  return e;
}

}  // namespace

extern "C" cudaError_t cudaCreateTextureObject(cudaTextureObject_t* pTexObject, const cudaResourceDesc* pResDesc,
                                               const cudaTextureDesc* pTexDesc,
                                               const cudaResourceViewDesc* pResViewDesc) {
  return api([&]() -> cudaError_t {
    if (!pTexObject || !pResDesc || !pTexDesc) return cudaErrorInvalidValue;
    return create_object(proto::kOpTextureObjectCreate, pTexObject, pResDesc, pTexDesc, pResViewDesc);
  });
}

extern "C" cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  return api([&] { return destroy_object(proto::kOpTextureObjectDestroy, texture_objects(), texObject); });
}

extern "C" cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* pResDesc, cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    auto r = texture_objects().find(texObject);
    if (!pResDesc || !r) return cudaErrorInvalidValue;
    *pResDesc = r->resource;
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* pTexDesc, cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    auto r = texture_objects().find(texObject);
    if (!pTexDesc || !r) return cudaErrorInvalidValue;
    *pTexDesc = r->texture;
    return cudaSuccess;
  });
}

// Without a view the resource is seen whole: an all-zero view says so.
extern "C" cudaError_t cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* pResViewDesc,
                                                            cudaTextureObject_t texObject) {
  return api([&]() -> cudaError_t {
    auto r = texture_objects().find(texObject);
    if (!pResViewDesc || !r) return cudaErrorInvalidValue;
    *pResViewDesc = r->view.value_or(cudaResourceViewDesc{});
    return cudaSuccess;
  });
}

extern "C" cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject, const cudaResourceDesc* pResDesc) {
  return api([&]() -> cudaError_t {
    if (!pSurfObject || !pResDesc) return cudaErrorInvalidValue;
    return create_object(proto::kOpSurfaceObjectCreate, pSurfObject, pResDesc, nullptr, nullptr);
  });
}

extern "C" cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) {
  return api([&] { return destroy_object(proto::kOpSurfaceObjectDestroy, surface_objects(), surfObject); });
}

extern "C" cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* pResDesc, cudaSurfaceObject_t surfObject) {
  return api([&]() -> cudaError_t {
    auto r = surface_objects().find(surfObject);
    if (!pResDesc || !r) return cudaErrorInvalidValue;
    *pResDesc = r->resource;
    return cudaSuccess;
  });
}
