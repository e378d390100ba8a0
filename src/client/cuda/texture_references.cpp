// Legacy texture and surface references (deprecated; nvcc has emitted none
// since CUDA 12): forwarded to the server's driver. The application's
// CUtexref / CUsurfref point at client records naming the server's
// reference; arrays and memory they bind are translated and checked there.
#include "client/cuda/cuda_api.hpp"

#include <cuda_runtime_api.h>

#include <optional>
#include <type_traits>

#include "client/core/call.hpp"
#include "client/core/memory_map.hpp"
#include "client/cuda/driver_errors.hpp"
#include "client/cuda/module_handles.hpp"
#include "client/core/array_objects.hpp"
#include "protocol/ops.hpp"
#include "protocol/texture_reference_wire.hpp"

using namespace rgpu;
using namespace rgpu::client;
using proto::RefAttr;
using proto::RefValue;

namespace {

struct Reference {
  int device;
  uint64_t remote;
};

ObjectRegistry<Reference, CUtexref>& texrefs() {
  static auto* r = new ObjectRegistry<Reference, CUtexref>;
  return *r;
}

ObjectRegistry<Reference, CUsurfref>& surfrefs() {
  static auto* r = new ObjectRegistry<Reference, CUsurfref>;
  return *r;
}

template <typename Handle>
cudaError_t find(Handle h, Reference* out) {
  std::optional<Reference> r;
  if constexpr (std::is_same_v<Handle, CUsurfref>)
    r = surfrefs().find(h);
  else
    r = texrefs().find(h);
  if (!r) return cudaErrorInvalidResourceHandle;
  *out = *r;
  return cudaSuccess;
}

// One property call on the reference's server; `value` carries the
// arguments and receives the answer.
template <typename Handle>
cudaError_t property(uint16_t op, Handle h, RefAttr attr, RefValue* value) {
  Reference r;
  if (cudaError_t e = find(h, &r)) return e;
  Call call(op);
  int32_t remote_device;
  if (cudaError_t e = call.to_device(r.device, &remote_device)) return e;
  call.args().put<uint64_t>(r.remote).put<uint32_t>(static_cast<uint32_t>(attr)).put(*value);
  if (op == proto::kOpReferenceGet) call.quiet();
  if (cudaError_t e = call.run()) return e;
  *value = call.reply().get<RefValue>();
  return cudaSuccess;
}

template <typename Handle>
CUresult set(Handle h, RefAttr attr, RefValue value) {
  return through_runtime([&] { return property(proto::kOpReferenceSet, h, attr, &value); });
}

// A property read: `store` takes the answer.
template <typename Handle, typename Store>
CUresult get(Handle h, RefAttr attr, Store store, RefValue asked = {}) {
  return through_runtime([&]() -> cudaError_t {
    if (cudaError_t e = property(proto::kOpReferenceGet, h, attr, &asked)) return e;
    return store(asked);
  });
}

// The client's handle of the array the server names on `device` (null: none bound).
CUarray array_for(int device, uint64_t remote) {
  auto found = arrays().select([&](const ArrayObject& a) { return a.device == device && a.remote == remote; });
  return found.empty() ? nullptr : reinterpret_cast<CUarray>(found.front());
}

template <typename Handle>
cudaError_t array_value(Handle h, CUarray array, unsigned flags, RefValue* v) {
  Reference r;
  if (cudaError_t e = find(h, &r)) return e;
  auto a = arrays().find(reinterpret_cast<cudaArray_t>(array));
  if (!a || a->device != r.device) return cudaErrorInvalidResourceHandle;
  v->handle = a->remote;
  v->a = static_cast<int32_t>(flags);
  return cudaSuccess;
}

CUresult module_reference(uint64_t* remote, int* device, CUmodule hmod, const char* name, bool surface) {
  return through_runtime([&]() -> cudaError_t {
    DriverModule* m = DriverHandles::get().find(hmod);
    if (!m) return cudaErrorInvalidResourceHandle;
    if (!name) return cudaErrorInvalidValue;
    Call call(proto::kOpModuleGetReference);
    int32_t remote_device;
    if (cudaError_t e = call.to_device(m->device, &remote_device)) return e;
    call.args().put<uint64_t>(m->remote).put_string(name).put<uint8_t>(surface);
    if (cudaError_t e = call.run()) return e;
    *remote = call.reply().get<uint64_t>();
    *device = m->device;
    return cudaSuccess;
  });
}

}  // namespace

extern "C" CUresult CUDAAPI cuTexRefCreate(CUtexref* pTexRef) {
  return through_runtime([&]() -> cudaError_t {
    if (!pTexRef) return cudaErrorInvalidValue;
    Call call(proto::kOpTexRefCreate);
    if (cudaError_t e = call.to_current_device()) return e;
    if (cudaError_t e = call.run()) return e;
    *pTexRef = texrefs().add({call.device_index(), call.reply().get<uint64_t>()});
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefDestroy(CUtexref hTexRef) {
  return through_runtime([&]() -> cudaError_t {
    Reference r;
    if (cudaError_t e = find(hTexRef, &r)) return e;
    Call call(proto::kOpTexRefDestroy);
    int32_t remote_device;
    if (cudaError_t e = call.to_device(r.device, &remote_device)) return e;
    call.args().put<uint64_t>(r.remote);
    cudaError_t e = call.run();
    if (e == cudaSuccess) texrefs().remove(hTexRef);
    return e;
  });
}

extern "C" CUresult CUDAAPI cuModuleGetTexRef(CUtexref* pTexRef, CUmodule hmod, const char* name) {
  if (!pTexRef) return CUDA_ERROR_INVALID_VALUE;
  uint64_t remote;
  int device;
  if (CUresult e = module_reference(&remote, &device, hmod, name, false)) return e;
  *pTexRef = texrefs().add({device, remote});
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuModuleGetSurfRef(CUsurfref* pSurfRef, CUmodule hmod, const char* name) {
  if (!pSurfRef) return CUDA_ERROR_INVALID_VALUE;
  uint64_t remote;
  int device;
  if (CUresult e = module_reference(&remote, &device, hmod, name, true)) return e;
  *pSurfRef = surfrefs().add({device, remote});
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuTexRefSetAddress_v2(size_t* ByteOffset, CUtexref hTexRef, CUdeviceptr dptr,
                                                  size_t bytes) {
  return through_runtime([&]() -> cudaError_t {
    RefValue v;
    v.handle = dptr;
    v.bytes = bytes;
    if (cudaError_t e = property(proto::kOpReferenceSet, hTexRef, RefAttr::address, &v)) return e;
    if (ByteOffset) *ByteOffset = v.bytes;
    return cudaSuccess;
  });
}

namespace {

CUresult set_address_2d(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc, CUdeviceptr dptr, size_t Pitch) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  RefValue v;
  v.handle = dptr;
  v.bytes = Pitch;
  v.width = desc->Width;
  v.height = desc->Height;
  v.a = desc->Format;
  v.b = static_cast<int32_t>(desc->NumChannels);
  return set(hTexRef, RefAttr::address_2d, v);
}

}  // namespace

extern "C" CUresult CUDAAPI cuTexRefSetAddress2D_v3(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc,
                                                    CUdeviceptr dptr, size_t Pitch) {
  return set_address_2d(hTexRef, desc, dptr, Pitch);
}

// The same call under its previous binding, whose signature is unchanged.
extern "C" CUresult CUDAAPI cuTexRefSetAddress2D_v2(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR* desc,
                                                    CUdeviceptr dptr, size_t Pitch) {
  return set_address_2d(hTexRef, desc, dptr, Pitch);
}

extern "C" CUresult CUDAAPI cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags) {
  return through_runtime([&]() -> cudaError_t {
    RefValue v;
    if (cudaError_t e = array_value(hTexRef, hArray, Flags, &v)) return e;
    return property(proto::kOpReferenceSet, hTexRef, RefAttr::array, &v);
  });
}

extern "C" CUresult CUDAAPI cuTexRefSetMipmappedArray(CUtexref hTexRef, CUmipmappedArray hMipmappedArray,
                                                      unsigned int Flags) {
  return through_runtime([&]() -> cudaError_t {
    Reference r;
    if (cudaError_t e = find(hTexRef, &r)) return e;
    auto m = mipmapped_arrays().find(reinterpret_cast<cudaMipmappedArray_t>(hMipmappedArray));
    if (!m || m->device != r.device) return cudaErrorInvalidResourceHandle;
    RefValue v;
    v.handle = m->remote;
    v.a = static_cast<int32_t>(Flags);
    return property(proto::kOpReferenceSet, hTexRef, RefAttr::mipmapped_array, &v);
  });
}

extern "C" CUresult CUDAAPI cuTexRefSetFormat(CUtexref hTexRef, CUarray_format fmt, int NumPackedComponents) {
  RefValue v;
  v.a = fmt;
  v.b = NumPackedComponents;
  return set(hTexRef, RefAttr::format, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetAddressMode(CUtexref hTexRef, int dim, CUaddress_mode am) {
  RefValue v;
  v.a = dim;
  v.b = am;
  return set(hTexRef, RefAttr::address_mode, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm) {
  RefValue v;
  v.a = fm;
  return set(hTexRef, RefAttr::filter_mode, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetMipmapFilterMode(CUtexref hTexRef, CUfilter_mode fm) {
  RefValue v;
  v.a = fm;
  return set(hTexRef, RefAttr::mipmap_filter_mode, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetMipmapLevelBias(CUtexref hTexRef, float bias) {
  RefValue v;
  v.f[0] = bias;
  return set(hTexRef, RefAttr::mipmap_level_bias, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetMipmapLevelClamp(CUtexref hTexRef, float minMipmapLevelClamp,
                                                        float maxMipmapLevelClamp) {
  RefValue v;
  v.f[0] = minMipmapLevelClamp;
  v.f[1] = maxMipmapLevelClamp;
  return set(hTexRef, RefAttr::mipmap_level_clamp, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetMaxAnisotropy(CUtexref hTexRef, unsigned int maxAniso) {
  RefValue v;
  v.a = static_cast<int32_t>(maxAniso);
  return set(hTexRef, RefAttr::max_anisotropy, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetBorderColor(CUtexref hTexRef, float* pBorderColor) {
  if (!pBorderColor) return CUDA_ERROR_INVALID_VALUE;
  RefValue v;
  for (int i = 0; i < 4; ++i) v.f[i] = pBorderColor[i];
  return set(hTexRef, RefAttr::border_color, v);
}

extern "C" CUresult CUDAAPI cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags) {
  RefValue v;
  v.a = static_cast<int32_t>(Flags);
  return set(hTexRef, RefAttr::flags, v);
}

extern "C" CUresult CUDAAPI cuTexRefGetAddress_v2(CUdeviceptr* pdptr, CUtexref hTexRef) {
  if (!pdptr) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::address, [&](const RefValue& v) {
    *pdptr = v.handle;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetArray(CUarray* phArray, CUtexref hTexRef) {
  if (!phArray) return CUDA_ERROR_INVALID_VALUE;
  Reference r;
  if (CUresult e = to_cu(find(hTexRef, &r))) return e;
  return get(hTexRef, RefAttr::array, [&](const RefValue& v) {
    *phArray = array_for(r.device, v.handle);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetMipmappedArray(CUmipmappedArray* phMipmappedArray, CUtexref hTexRef) {
  if (!phMipmappedArray) return CUDA_ERROR_INVALID_VALUE;
  Reference r;
  if (CUresult e = to_cu(find(hTexRef, &r))) return e;
  return get(hTexRef, RefAttr::mipmapped_array, [&](const RefValue& v) {
    auto found = mipmapped_arrays().select(
        [&](const MipmapObject& m) { return m.device == r.device && m.remote == v.handle; });
    *phMipmappedArray = found.empty() ? nullptr : reinterpret_cast<CUmipmappedArray>(found.front());
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetAddressMode(CUaddress_mode* pam, CUtexref hTexRef, int dim) {
  if (!pam) return CUDA_ERROR_INVALID_VALUE;
  RefValue asked;
  asked.a = dim;
  return get(
      hTexRef, RefAttr::address_mode,
      [&](const RefValue& v) {
        *pam = static_cast<CUaddress_mode>(v.b);
        return cudaSuccess;
      },
      asked);
}

extern "C" CUresult CUDAAPI cuTexRefGetFilterMode(CUfilter_mode* pfm, CUtexref hTexRef) {
  if (!pfm) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::filter_mode, [&](const RefValue& v) {
    *pfm = static_cast<CUfilter_mode>(v.a);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetFormat(CUarray_format* pFormat, int* pNumChannels, CUtexref hTexRef) {
  if (!pFormat || !pNumChannels) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::format, [&](const RefValue& v) {
    *pFormat = static_cast<CUarray_format>(v.a);
    *pNumChannels = v.b;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetMipmapFilterMode(CUfilter_mode* pfm, CUtexref hTexRef) {
  if (!pfm) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::mipmap_filter_mode, [&](const RefValue& v) {
    *pfm = static_cast<CUfilter_mode>(v.a);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetMipmapLevelBias(float* pbias, CUtexref hTexRef) {
  if (!pbias) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::mipmap_level_bias, [&](const RefValue& v) {
    *pbias = v.f[0];
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetMipmapLevelClamp(float* pminMipmapLevelClamp, float* pmaxMipmapLevelClamp,
                                                        CUtexref hTexRef) {
  if (!pminMipmapLevelClamp || !pmaxMipmapLevelClamp) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::mipmap_level_clamp, [&](const RefValue& v) {
    *pminMipmapLevelClamp = v.f[0];
    *pmaxMipmapLevelClamp = v.f[1];
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetMaxAnisotropy(int* pmaxAniso, CUtexref hTexRef) {
  if (!pmaxAniso) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::max_anisotropy, [&](const RefValue& v) {
    *pmaxAniso = v.a;
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetBorderColor(float* pBorderColor, CUtexref hTexRef) {
  if (!pBorderColor) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::border_color, [&](const RefValue& v) {
    for (int i = 0; i < 4; ++i) pBorderColor[i] = v.f[i];
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuTexRefGetFlags(unsigned int* pFlags, CUtexref hTexRef) {
  if (!pFlags) return CUDA_ERROR_INVALID_VALUE;
  return get(hTexRef, RefAttr::flags, [&](const RefValue& v) {
    *pFlags = static_cast<unsigned>(v.a);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags) {
  return through_runtime([&]() -> cudaError_t {
    RefValue v;
    if (cudaError_t e = array_value(hSurfRef, hArray, Flags, &v)) return e;
    return property(proto::kOpReferenceSet, hSurfRef, RefAttr::surface_array, &v);
  });
}

extern "C" CUresult CUDAAPI cuSurfRefGetArray(CUarray* phArray, CUsurfref hSurfRef) {
  if (!phArray) return CUDA_ERROR_INVALID_VALUE;
  Reference r;
  if (CUresult e = to_cu(find(hSurfRef, &r))) return e;
  return get(hSurfRef, RefAttr::surface_array, [&](const RefValue& v) {
    *phArray = array_for(r.device, v.handle);
    return cudaSuccess;
  });
}

extern "C" CUresult CUDAAPI cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef) {
  return through_runtime([&]() -> cudaError_t {
    Reference r;
    if (cudaError_t e = find(hTexRef, &r)) return e;
    DriverFunction* fn = DriverHandles::get().find(hfunc);
    if (!fn || fn->module->device != r.device) return cudaErrorInvalidResourceHandle;
    RefValue v;
    v.handle = fn->kernel.function;
    v.a = texunit;
    return property(proto::kOpReferenceSet, hTexRef, RefAttr::function_parameter, &v);
  });
}
