// Legacy texture and surface references through the driver API: a created
// reference's properties set and read back, bindings to the program's own
// memory and arrays (and not to anything else), references asked of a
// module, cuParamSetTexRef, and bad handles.
#define CUDA_ENABLE_DEPRECATED  // these are the deprecated calls under test
#include <vector>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  CUtexref t;
  CU_OK(cuTexRefCreate(&t));
  CU_OK(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 2));
  CU_OK(cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
  CU_OK(cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR));
  CU_OK(cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
  CU_OK(cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES));
  CU_OK(cuTexRefSetMaxAnisotropy(t, 4));
  CU_OK(cuTexRefSetMipmapFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
  CU_OK(cuTexRefSetMipmapLevelBias(t, 0.5f));
  CU_OK(cuTexRefSetMipmapLevelClamp(t, 1.f, 3.f));
  float color[4] = {0.25f, 0.5f, 0.75f, 1.f};
  CU_OK(cuTexRefSetBorderColor(t, color));

  CUarray_format format;
  int channels = 0;
  CU_OK(cuTexRefGetFormat(&format, &channels, t));
  CHECK(format == CU_AD_FORMAT_FLOAT && channels == 2);
  CUaddress_mode mode;
  CU_OK(cuTexRefGetAddressMode(&mode, t, 1));
  CHECK(mode == CU_TR_ADDRESS_MODE_MIRROR);
  CU_OK(cuTexRefGetAddressMode(&mode, t, 0));
  CHECK(mode == CU_TR_ADDRESS_MODE_CLAMP);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexRefGetAddressMode(&mode, t, 3));
  CUfilter_mode filter;
  CU_OK(cuTexRefGetFilterMode(&filter, t));
  CHECK(filter == CU_TR_FILTER_MODE_LINEAR);
  unsigned flags = 0;
  CU_OK(cuTexRefGetFlags(&flags, t));
  CHECK(flags == CU_TRSF_NORMALIZED_COORDINATES);
  int aniso = 0;
  CU_OK(cuTexRefGetMaxAnisotropy(&aniso, t));
  CHECK(aniso == 4);
  CU_OK(cuTexRefGetMipmapFilterMode(&filter, t));
  CHECK(filter == CU_TR_FILTER_MODE_LINEAR);
  float bias = 0, lo = 0, hi = 0;
  CU_OK(cuTexRefGetMipmapLevelBias(&bias, t));
  CU_OK(cuTexRefGetMipmapLevelClamp(&lo, &hi, t));
  CHECK(bias == 0.5f && lo == 1.f && hi == 3.f);
  float color_back[4] = {};
  CU_OK(cuTexRefGetBorderColor(color_back, t));
  CHECK(color_back[0] == 0.25f && color_back[3] == 1.f);

  // Bound to linear memory, then to pitched memory, of this program only.
  CUdeviceptr d;
  CU_OK(cuMemAlloc(&d, 4096));
  size_t offset = 99;
  CU_OK(cuTexRefSetAddress(&offset, t, d, 4096));
  CUdeviceptr bound = 0;
  CU_OK(cuTexRefGetAddress(&bound, t));
  CHECK(bound == d);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexRefSetAddress(&offset, t, d, 4097));
  std::vector<float> host(64);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuTexRefSetAddress(&offset, t, reinterpret_cast<CUdeviceptr>(host.data()), 64));
  CUDA_ARRAY_DESCRIPTOR pd{16, 8, CU_AD_FORMAT_FLOAT, 2};
  CU_OK(cuTexRefSetAddress2D(t, &pd, d, 256));
  pd.Height = 17;  // 17 rows of 256 bytes: past the allocation
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexRefSetAddress2D(t, &pd, d, 256));
  pd.Height = 8;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexRefSetAddress2D(t, &pd, d, 64));  // pitch narrower than a row

  // Bound to an array and a mipmapped array.
  CUDA_ARRAY_DESCRIPTOR ad{16, 8, CU_AD_FORMAT_FLOAT, 2};
  CUarray a;
  CU_OK(cuArrayCreate(&a, &ad));
  CU_OK(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
  CUarray a_back = nullptr;
  CU_OK(cuTexRefGetArray(&a_back, t));
  CHECK(a_back == a);
  CUDA_ARRAY3D_DESCRIPTOR md{16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray m;
  CU_OK(cuMipmappedArrayCreate(&m, &md, 2));
  CU_OK(cuTexRefSetMipmappedArray(t, m, CU_TRSA_OVERRIDE_FORMAT));
  CUmipmappedArray m_back = nullptr;
  CU_OK(cuTexRefGetMipmappedArray(&m_back, t));
  CHECK(m_back == m);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuTexRefSetArray(t, reinterpret_cast<CUarray>(host.data()), 0));

  // References asked of a module: current modules declare none.
  CUmodule module;
  CU_OK(cuModuleLoad(&module, RGPU_PTX_FILE));
  CUtexref from_module;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetTexRef(&from_module, module, "no_such_texture"));
  CUsurfref surface;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetSurfRef(&surface, module, "no_such_surface"));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cuModuleGetTexRef(&from_module, reinterpret_cast<CUmodule>(host.data()), "no_such_texture"));
  CUfunction vadd;
  CU_OK(cuModuleGetFunction(&vadd, module, "vadd"));
  CU_OK(cuParamSetTexRef(vadd, CU_PARAM_TR_DEFAULT, t));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuParamSetTexRef(vadd, 0, t));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuSurfRefSetArray(reinterpret_cast<CUsurfref>(host.data()), a, 0));

  CU_OK(cuTexRefDestroy(t));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuTexRefDestroy(t));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuTexRefGetFlags(&flags, t));
  CU_OK(cuMipmappedArrayDestroy(m));
  CU_OK(cuArrayDestroy(a));
  CU_OK(cuMemFree(d));
  CU_OK(cuModuleUnload(module));
  return finish();
}
