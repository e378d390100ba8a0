#include "client/cuda/texture_descs.hpp"

#include "client/cuda/array_formats.hpp"
#include "protocol/wire_enum.hpp"

namespace rgpu::client {
namespace {

bool is_integer(const cudaChannelFormatDesc& f) { return proto::enum_number(f.f) != cudaChannelFormatKindFloat; }

}  // namespace

bool to_runtime(const CUDA_RESOURCE_DESC& d, cudaResourceDesc* out) {
  *out = {};
  proto::set_enum_number(&out->resType, proto::enum_number(d.resType));
  out->flags = d.flags;
  switch (proto::enum_number(d.resType)) {
    case CU_RESOURCE_TYPE_ARRAY:
      out->res.array.array = reinterpret_cast<cudaArray_t>(d.res.array.hArray);
      return true;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      out->res.mipmap.mipmap = reinterpret_cast<cudaMipmappedArray_t>(d.res.mipmap.hMipmappedArray);
      return true;
    case CU_RESOURCE_TYPE_LINEAR: {
      auto& l = out->res.linear;
      l.devPtr = reinterpret_cast<void*>(d.res.linear.devPtr);
      l.sizeInBytes = d.res.linear.sizeInBytes;
      return to_channel_desc(d.res.linear.format, d.res.linear.numChannels, &l.desc);
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      auto& p = out->res.pitch2D;
      p.devPtr = reinterpret_cast<void*>(d.res.pitch2D.devPtr);
      p.width = d.res.pitch2D.width;
      p.height = d.res.pitch2D.height;
      p.pitchInBytes = d.res.pitch2D.pitchInBytes;
      return to_channel_desc(d.res.pitch2D.format, d.res.pitch2D.numChannels, &p.desc);
    }
  }
  return false;
}

void to_driver(const cudaResourceDesc& r, CUDA_RESOURCE_DESC* out) {
  *out = {};
  proto::set_enum_number(&out->resType, proto::enum_number(r.resType));
  out->flags = r.flags;
  switch (proto::enum_number(r.resType)) {
    case cudaResourceTypeArray: out->res.array.hArray = reinterpret_cast<CUarray>(r.res.array.array); break;
    case cudaResourceTypeMipmappedArray:
      out->res.mipmap.hMipmappedArray = reinterpret_cast<CUmipmappedArray>(r.res.mipmap.mipmap);
      break;
    case cudaResourceTypeLinear: {
      auto& l = out->res.linear;
      l.devPtr = reinterpret_cast<CUdeviceptr>(r.res.linear.devPtr);
      l.sizeInBytes = r.res.linear.sizeInBytes;
      to_array_format(r.res.linear.desc, &l.format, &l.numChannels);
      break;
    }
    case cudaResourceTypePitch2D: {
      auto& p = out->res.pitch2D;
      p.devPtr = reinterpret_cast<CUdeviceptr>(r.res.pitch2D.devPtr);
      p.width = r.res.pitch2D.width;
      p.height = r.res.pitch2D.height;
      p.pitchInBytes = r.res.pitch2D.pitchInBytes;
      to_array_format(r.res.pitch2D.desc, &p.format, &p.numChannels);
      break;
    }
  }
}


// Without CU_TRSF_READ_AS_INTEGER the driver reads 8- and 16-bit integers
// as normalized floats; everything else is read as it is.
cudaTextureDesc to_runtime(const CUDA_TEXTURE_DESC& t, const cudaChannelFormatDesc& format) {
  cudaTextureDesc r{};
  for (int i = 0; i < 3; ++i) proto::set_enum_number(&r.addressMode[i], proto::enum_number(t.addressMode[i]));
  proto::set_enum_number(&r.filterMode, proto::enum_number(t.filterMode));
  bool as_integer = t.flags & CU_TRSF_READ_AS_INTEGER;
  r.readMode = !as_integer && is_integer(format) && format.x < 32 ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
  r.sRGB = (t.flags & CU_TRSF_SRGB) != 0;
  for (int i = 0; i < 4; ++i) r.borderColor[i] = t.borderColor[i];
  r.normalizedCoords = (t.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  r.maxAnisotropy = t.maxAnisotropy;
  proto::set_enum_number(&r.mipmapFilterMode, proto::enum_number(t.mipmapFilterMode));
  r.mipmapLevelBias = t.mipmapLevelBias;
  r.minMipmapLevelClamp = t.minMipmapLevelClamp;
  r.maxMipmapLevelClamp = t.maxMipmapLevelClamp;
  r.disableTrilinearOptimization = (t.flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) != 0;
  r.seamlessCubemap = (t.flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0;
  return r;
}

CUDA_TEXTURE_DESC to_driver(const cudaTextureDesc& r, const cudaChannelFormatDesc& format) {
  CUDA_TEXTURE_DESC t{};
  for (int i = 0; i < 3; ++i) proto::set_enum_number(&t.addressMode[i], proto::enum_number(r.addressMode[i]));
  proto::set_enum_number(&t.filterMode, proto::enum_number(r.filterMode));
  if (proto::enum_number(r.readMode) == cudaReadModeElementType && is_integer(format)) t.flags |= CU_TRSF_READ_AS_INTEGER;
  if (r.normalizedCoords) t.flags |= CU_TRSF_NORMALIZED_COORDINATES;
  if (r.sRGB) t.flags |= CU_TRSF_SRGB;
  if (r.disableTrilinearOptimization) t.flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
  if (r.seamlessCubemap) t.flags |= CU_TRSF_SEAMLESS_CUBEMAP;
  t.maxAnisotropy = r.maxAnisotropy;
  proto::set_enum_number(&t.mipmapFilterMode, proto::enum_number(r.mipmapFilterMode));
  t.mipmapLevelBias = r.mipmapLevelBias;
  t.minMipmapLevelClamp = r.minMipmapLevelClamp;
  t.maxMipmapLevelClamp = r.maxMipmapLevelClamp;
  for (int i = 0; i < 4; ++i) t.borderColor[i] = r.borderColor[i];
  return t;
}

// CUDA_RESOURCE_VIEW_DESC is cudaResourceViewDesc field for field.
cudaResourceViewDesc to_runtime(const CUDA_RESOURCE_VIEW_DESC& v) {
  cudaResourceViewDesc r{{}, v.width, v.height, v.depth, v.firstMipmapLevel, v.lastMipmapLevel, v.firstLayer,
                         v.lastLayer, {}};
  proto::set_enum_number(&r.format, proto::enum_number(v.format));
  return r;
}

CUDA_RESOURCE_VIEW_DESC to_driver(const cudaResourceViewDesc& v) {
  CUDA_RESOURCE_VIEW_DESC d{{}, v.width, v.height, v.depth, v.firstMipmapLevel, v.lastMipmapLevel, v.firstLayer,
                            v.lastLayer, {}};
  proto::set_enum_number(&d.format, proto::enum_number(v.format));
  return d;
}


}  // namespace rgpu::client
