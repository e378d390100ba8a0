// Texture and surface objects through the runtime API: made from arrays,
// mipmapped arrays, linear and pitched memory; their descriptors read back;
// destroyed; and the errors of bad handles, foreign memory and resources
// whose rows do not fit their pitch.
#include <cstring>

#include "check.h"

int main() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a, plain;
  OK(cudaMallocArray(&a, &f, 16, 8, cudaArraySurfaceLoadStore));
  OK(cudaMallocArray(&plain, &f, 16, 8));

  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc tex{};
  tex.addressMode[0] = tex.addressMode[1] = cudaAddressModeClamp;
  tex.filterMode = cudaFilterModeLinear;
  tex.readMode = cudaReadModeElementType;
  tex.normalizedCoords = 1;
  cudaTextureObject_t t = 0;
  OK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  CHECK(t != 0);
  cudaResourceDesc res_back;
  OK(cudaGetTextureObjectResourceDesc(&res_back, t));
  CHECK(res_back.resType == cudaResourceTypeArray && res_back.res.array.array == a);
  cudaTextureDesc tex_back;
  OK(cudaGetTextureObjectTextureDesc(&tex_back, t));
  CHECK(tex_back.filterMode == cudaFilterModeLinear && tex_back.normalizedCoords == 1);

  // With a view, on pitched memory.
  void* p;
  size_t pitch;
  OK(cudaMallocPitch(&p, &pitch, 16 * sizeof(float), 8));
  cudaResourceDesc pitched{};
  pitched.resType = cudaResourceTypePitch2D;
  pitched.res.pitch2D.devPtr = p;
  pitched.res.pitch2D.desc = f;
  pitched.res.pitch2D.width = 16;
  pitched.res.pitch2D.height = 8;
  pitched.res.pitch2D.pitchInBytes = pitch;
  cudaResourceViewDesc view{};
  view.format = cudaResViewFormatFloat1;
  view.width = 16;
  view.height = 8;
  cudaTextureObject_t tp = 0;
  OK(cudaCreateTextureObject(&tp, &pitched, &tex, &view));
  CHECK(tp != 0 && tp != t);
  cudaResourceViewDesc view_back;
  OK(cudaGetTextureObjectResourceViewDesc(&view_back, tp));
  CHECK(view_back.format == cudaResViewFormatFloat1 && view_back.width == 16);

  // Linear memory.
  void* lin;
  OK(cudaMalloc(&lin, 1024));
  cudaResourceDesc linear{};
  linear.resType = cudaResourceTypeLinear;
  linear.res.linear.devPtr = lin;
  linear.res.linear.desc = f;
  linear.res.linear.sizeInBytes = 1024;
  cudaTextureDesc point{};
  cudaTextureObject_t tl = 0;
  OK(cudaCreateTextureObject(&tl, &linear, &point, nullptr));
  // ... running past its allocation too, as the driver allows (convolutionFFT2D's
  // float2 textures, filtered linearly, wrapping, do).
  cudaResourceDesc past = linear;
  past.res.linear.desc = cudaCreateChannelDesc<float2>();
  past.res.linear.sizeInBytes = 1024 + 256;
  cudaTextureDesc wrap{};
  wrap.filterMode = cudaFilterModeLinear;
  wrap.addressMode[0] = cudaAddressModeWrap;
  wrap.readMode = cudaReadModeElementType;
  cudaTextureObject_t tpast = 0;
  OK(cudaCreateTextureObject(&tpast, &past, &wrap, nullptr));
  cudaResourceDesc past_back;
  OK(cudaGetTextureObjectResourceDesc(&past_back, tpast));
  CHECK(past_back.res.linear.sizeInBytes == 1024 + 256 && past_back.res.linear.desc.y == 32);
  OK(cudaDestroyTextureObject(tpast));
  // Not on memory that is not the program's.
  cudaTextureObject_t bad = 0;
  float host[4];
  linear.res.linear.devPtr = host;
  linear.res.linear.sizeInBytes = sizeof host;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateTextureObject(&bad, &linear, &point, nullptr));
  pitched.res.pitch2D.pitchInBytes = 16;  // narrower than a row
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateTextureObject(&bad, &pitched, &tex, nullptr));

  // Mipmapped arrays.
  cudaMipmappedArray_t m;
  OK(cudaMallocMipmappedArray(&m, &f, make_cudaExtent(32, 32, 0), 3));
  cudaResourceDesc mip{};
  mip.resType = cudaResourceTypeMipmappedArray;
  mip.res.mipmap.mipmap = m;
  tex.mipmapFilterMode = cudaFilterModeLinear;
  tex.maxMipmapLevelClamp = 2;
  cudaTextureObject_t tm = 0;
  OK(cudaCreateTextureObject(&tm, &mip, &tex, nullptr));

  // Surfaces: only on arrays made for them.
  cudaSurfaceObject_t s = 0;
  OK(cudaCreateSurfaceObject(&s, &res));
  cudaResourceDesc surf_back;
  OK(cudaGetSurfaceObjectResourceDesc(&surf_back, s));
  CHECK(surf_back.res.array.array == a);
  res.res.array.array = plain;
  cudaSurfaceObject_t s_bad = 0;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateSurfaceObject(&s_bad, &res));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateSurfaceObject(&s_bad, &linear));

  // Enumerations out of range.
  cudaTextureDesc odd = tex;
  odd.addressMode[2] = static_cast<cudaTextureAddressMode>(9);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateTextureObject(&bad, &mip, &odd, nullptr));
  odd = tex;
  odd.filterMode = static_cast<cudaTextureFilterMode>(2);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaCreateTextureObject(&bad, &mip, &odd, nullptr));

  // Bad handles.
  res.res.array.array = reinterpret_cast<cudaArray_t>(host);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaCreateTextureObject(&bad, &res, &tex, nullptr));
  // No texture descriptor: NVIDIA's runtime (built static) refuses the handle it cannot use first.
  cudaError_t no_desc = cudaCreateTextureObject(&bad, &mip, nullptr, nullptr);
  CHECK(no_desc == cudaErrorInvalidValue || no_desc == cudaErrorInvalidResourceHandle);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDestroyTextureObject(t + tp + tl + tm + 1000));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetTextureObjectTextureDesc(&tex_back, 0xdead));

  OK(cudaDestroyTextureObject(t));
  OK(cudaDestroyTextureObject(tp));
  OK(cudaDestroyTextureObject(tl));
  OK(cudaDestroyTextureObject(tm));
  OK(cudaDestroySurfaceObject(s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDestroyTextureObject(t));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDestroySurfaceObject(s));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaGetTextureObjectResourceDesc(&res_back, t));
  OK(cudaFreeMipmappedArray(m));
  OK(cudaFree(lin));
  OK(cudaFree(p));
  OK(cudaFreeArray(a));
  OK(cudaFreeArray(plain));
  return finish();
}
