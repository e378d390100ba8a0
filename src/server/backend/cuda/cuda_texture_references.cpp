// Legacy texture and surface references on the real GPU: the driver's
// deprecated cuTexRef* / cuSurfRef* calls, handles passed through.
#define CUDA_ENABLE_DEPRECATED  // these calls are deprecated, and exactly what is asked for
#include <cuda.h>

#include "server/backend/cuda/cuda_arrays.hpp"

namespace rgpu::server {
namespace {

CUtexref tex(uint64_t h) { return reinterpret_cast<CUtexref>(h); }
int32_t rt(CUresult r) { return static_cast<int32_t>(r); }

}  // namespace

int32_t CudaArrays::texref_create(uint64_t* ref) {
  CUtexref t = nullptr;
  CUresult r = cuTexRefCreate(&t);
  *ref = reinterpret_cast<uint64_t>(t);
  return rt(r);
}

int32_t CudaArrays::texref_destroy(uint64_t ref) { return rt(cuTexRefDestroy(tex(ref))); }

int32_t CudaArrays::module_get_reference(uint64_t module, const std::string& name, bool surface, uint64_t* ref) {
  auto m = reinterpret_cast<CUmodule>(module);
  if (surface) {
    CUsurfref s = nullptr;
    CUresult r = cuModuleGetSurfRef(&s, m, name.c_str());
    *ref = reinterpret_cast<uint64_t>(s);
    return rt(r);
  }
  CUtexref t = nullptr;
  CUresult r = cuModuleGetTexRef(&t, m, name.c_str());
  *ref = reinterpret_cast<uint64_t>(t);
  return rt(r);
}

int32_t CudaArrays::reference_set(uint64_t ref, proto::RefAttr attr, const proto::RefValue& v, proto::RefValue* out) {
  using A = proto::RefAttr;
  CUtexref t = tex(ref);
  *out = {};
  switch (attr) {
    case A::address: {
      size_t offset = 0;
      CUresult r = cuTexRefSetAddress_v2(&offset, t, v.handle, v.bytes);
      out->bytes = offset;
      return rt(r);
    }
    case A::address_2d: {
      CUDA_ARRAY_DESCRIPTOR d{v.width, v.height, static_cast<CUarray_format>(v.a), static_cast<unsigned>(v.b)};
      return rt(cuTexRefSetAddress2D_v3(t, &d, v.handle, v.bytes));
    }
    case A::address_mode: return rt(cuTexRefSetAddressMode(t, v.a, static_cast<CUaddress_mode>(v.b)));
    case A::array: return rt(cuTexRefSetArray(t, reinterpret_cast<CUarray>(v.handle), v.a));
    case A::mipmapped_array:
      return rt(cuTexRefSetMipmappedArray(t, reinterpret_cast<CUmipmappedArray>(v.handle), v.a));
    case A::border_color: {
      float color[4] = {v.f[0], v.f[1], v.f[2], v.f[3]};
      return rt(cuTexRefSetBorderColor(t, color));
    }
    case A::filter_mode: return rt(cuTexRefSetFilterMode(t, static_cast<CUfilter_mode>(v.a)));
    case A::flags: return rt(cuTexRefSetFlags(t, v.a));
    case A::format: return rt(cuTexRefSetFormat(t, static_cast<CUarray_format>(v.a), v.b));
    case A::max_anisotropy: return rt(cuTexRefSetMaxAnisotropy(t, v.a));
    case A::mipmap_filter_mode: return rt(cuTexRefSetMipmapFilterMode(t, static_cast<CUfilter_mode>(v.a)));
    case A::mipmap_level_bias: return rt(cuTexRefSetMipmapLevelBias(t, v.f[0]));
    case A::mipmap_level_clamp: return rt(cuTexRefSetMipmapLevelClamp(t, v.f[0], v.f[1]));
    case A::surface_array:
      return rt(cuSurfRefSetArray(reinterpret_cast<CUsurfref>(ref), reinterpret_cast<CUarray>(v.handle), v.a));
    case A::function_parameter: return rt(cuParamSetTexRef(reinterpret_cast<CUfunction>(v.handle), v.a, t));
  }
  return CUDA_ERROR_INVALID_VALUE;
}

int32_t CudaArrays::reference_get(uint64_t ref, proto::RefAttr attr, proto::RefValue* v) {
  using A = proto::RefAttr;
  CUtexref t = tex(ref);
  switch (attr) {
    case A::address: {
      CUdeviceptr p = 0;
      CUresult r = cuTexRefGetAddress_v2(&p, t);
      v->handle = p;
      return rt(r);
    }
    case A::address_mode: {
      CUaddress_mode m{};
      CUresult r = cuTexRefGetAddressMode(&m, t, v->a);
      v->b = m;
      return rt(r);
    }
    case A::array: {
      CUarray a = nullptr;
      CUresult r = cuTexRefGetArray(&a, t);
      v->handle = reinterpret_cast<uint64_t>(a);
      return rt(r);
    }
    case A::mipmapped_array: {
      CUmipmappedArray m = nullptr;
      CUresult r = cuTexRefGetMipmappedArray(&m, t);
      v->handle = reinterpret_cast<uint64_t>(m);
      return rt(r);
    }
    case A::border_color: return rt(cuTexRefGetBorderColor(v->f, t));
    case A::filter_mode: {
      CUfilter_mode m{};
      CUresult r = cuTexRefGetFilterMode(&m, t);
      v->a = m;
      return rt(r);
    }
    case A::flags: {
      unsigned f = 0;
      CUresult r = cuTexRefGetFlags(&f, t);
      v->a = static_cast<int32_t>(f);
      return rt(r);
    }
    case A::format: {
      CUarray_format f{};
      CUresult r = cuTexRefGetFormat(&f, &v->b, t);
      v->a = f;
      return rt(r);
    }
    case A::max_anisotropy: return rt(cuTexRefGetMaxAnisotropy(&v->a, t));
    case A::mipmap_filter_mode: {
      CUfilter_mode m{};
      CUresult r = cuTexRefGetMipmapFilterMode(&m, t);
      v->a = m;
      return rt(r);
    }
    case A::mipmap_level_bias: return rt(cuTexRefGetMipmapLevelBias(&v->f[0], t));
    case A::mipmap_level_clamp: return rt(cuTexRefGetMipmapLevelClamp(&v->f[0], &v->f[1], t));
    case A::surface_array: {
      CUarray a = nullptr;
      CUresult r = cuSurfRefGetArray(&a, reinterpret_cast<CUsurfref>(ref));
      v->handle = reinterpret_cast<uint64_t>(a);
      return rt(r);
    }
    case A::address_2d:
    case A::function_parameter: break;  // set only
  }
  return CUDA_ERROR_INVALID_VALUE;
}

}  // namespace rgpu::server
