// Driver-API arrays and texture objects: cuArray3DCreate, cuMemcpyHtoA and
// cuMemcpy3D / cuMemcpy2D with array sides, cuTexObjectCreate (point and
// linear filtering, read as integer) and cuSurfObjectCreate, read and
// written by kernels; results checked on the host.
#include <cmath>
#include <vector>

#include "driver_corpus.h"

__global__ void fetch(CUtexObject t, float* out, int w, int h, int layer_stride) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * layer_stride + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void midpoints(CUtexObject t, float* out, int w) {
  int x = threadIdx.x;
  if (x < w - 1) out[x] = tex2D<float>(t, x + 1.0f, 0.5f);  // halfway between texels x and x + 1
}

__global__ void fetch_uint(CUtexObject t, unsigned* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = tex1D<unsigned>(t, i + 0.5f) + 1;
}

__global__ void invert(CUsurfObject s, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) {
    float v = surf2Dread<float>(s, x * sizeof(float), y);
    surf2Dwrite(-v, s, x * sizeof(float), y);
  }
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));

  const int w = 40, h = 12;
  CUDA_ARRAY3D_DESCRIPTOR ad{w, h, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST};
  CUarray a;
  CU(cuArray3DCreate(&a, &ad));
  CUDA_ARRAY3D_DESCRIPTOR got{};
  CU(cuArray3DGetDescriptor(&got, a));
  EXPECT(got.Width == w && got.Height == h && got.Format == CU_AD_FORMAT_FLOAT && got.NumChannels == 1, "descriptor");
  std::vector<float> img(w * h);
  for (int i = 0; i < w * h; ++i) img[i] = float(i % 97) * 0.5f;
  // A linear copy into a 2-D array: CUDA's answer for a whole image and for
  // its first row, printed so that rgpu must give the same.
  const char* name;
  cuGetErrorName(cuMemcpyHtoA(a, 0, img.data(), img.size() * sizeof(float)), &name);
  printf("cuMemcpyHtoA whole 2-D array: %s\n", name);
  cuGetErrorName(cuMemcpyHtoA(a, 0, img.data(), w * sizeof(float)), &name);
  printf("cuMemcpyHtoA first row: %s\n", name);
  CUDA_MEMCPY2D up{};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = img.data();
  up.srcPitch = w * sizeof(float);
  up.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  up.dstArray = a;
  up.WidthInBytes = w * sizeof(float);
  up.Height = h;
  CU(cuMemcpy2D(&up));

  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a;
  CUDA_TEXTURE_DESC td{};
  td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = CU_TR_FILTER_MODE_POINT;
  CUtexObject t;
  CU(cuTexObjectCreate(&t, &res, &td, nullptr));
  float* d_out;
  CU(cuMemAlloc(reinterpret_cast<CUdeviceptr*>(&d_out), w * h * sizeof(float)));
  fetch<<<h, w>>>(t, d_out, w, h, w);
  CK(cudaGetLastError());
  std::vector<float> out(w * h);
  CU(cuMemcpyDtoH(out.data(), reinterpret_cast<CUdeviceptr>(d_out), out.size() * sizeof(float)));
  int bad = 0;
  for (int i = 0; i < w * h; ++i) bad += out[i] != img[i];
  EXPECT(bad == 0, "%d point fetches wrong", bad);
  printf("driver texture point fetch %dx%d: wrong %d\n", w, h, bad);

  // Linear filtering halfway between texels: their mean.
  td.filterMode = CU_TR_FILTER_MODE_LINEAR;
  CUtexObject tl;
  CU(cuTexObjectCreate(&tl, &res, &td, nullptr));
  midpoints<<<1, w>>>(tl, d_out, w);
  CU(cuMemcpyDtoH(out.data(), reinterpret_cast<CUdeviceptr>(d_out), (w - 1) * sizeof(float)));
  bad = 0;
  for (int x = 0; x < w - 1; ++x) bad += std::fabs(out[x] - 0.5f * (img[x] + img[x + 1])) > 1e-3f;
  EXPECT(bad == 0, "%d midpoints wrong", bad);
  printf("driver texture linear midpoints: wrong %d\n", bad);

  // A surface on the same array: negate in place, copy out with cuMemcpy2D.
  CUsurfObject s;
  CU(cuSurfObjectCreate(&s, &res));
  invert<<<h, w>>>(s, w, h);
  CK(cudaGetLastError());
  std::vector<float> back(w * h);
  CUDA_MEMCPY2D c2{};
  c2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c2.srcArray = a;
  c2.dstMemoryType = CU_MEMORYTYPE_HOST;
  c2.dstHost = back.data();
  c2.dstPitch = w * sizeof(float);
  c2.WidthInBytes = w * sizeof(float);
  c2.Height = h;
  CU(cuMemcpy2D(&c2));
  bad = 0;
  for (int i = 0; i < w * h; ++i) bad += back[i] != -img[i];
  EXPECT(bad == 0, "%d surface writes wrong", bad);
  printf("driver surface negate: wrong %d\n", bad);

  // A 1-D unsigned array read as integers, filled by cuMemcpy3D.
  const int n = 200;
  CUDA_ARRAY3D_DESCRIPTOR ud{n, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0};
  CUarray u;
  CU(cuArray3DCreate(&u, &ud));
  std::vector<unsigned> vals(n), vals_back(n);
  for (int i = 0; i < n; ++i) vals[i] = 7u * i + 3u;
  CUDA_MEMCPY3D c3{};
  c3.srcMemoryType = CU_MEMORYTYPE_HOST;
  c3.srcHost = vals.data();
  c3.srcPitch = n * sizeof(unsigned);
  c3.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c3.dstArray = u;
  c3.WidthInBytes = n * sizeof(unsigned);
  c3.Height = 1;
  c3.Depth = 1;
  CU(cuMemcpy3D(&c3));
  res.res.array.hArray = u;
  CUDA_TEXTURE_DESC ut{};
  ut.filterMode = CU_TR_FILTER_MODE_POINT;
  ut.flags = CU_TRSF_READ_AS_INTEGER;
  CUtexObject tu;
  CU(cuTexObjectCreate(&tu, &res, &ut, nullptr));
  CUDA_TEXTURE_DESC ut_back{};
  CU(cuTexObjectGetTextureDesc(&ut_back, tu));
  EXPECT(ut_back.flags & CU_TRSF_READ_AS_INTEGER, "read-as-integer flag read back");
  unsigned* d_u;
  CU(cuMemAlloc(reinterpret_cast<CUdeviceptr*>(&d_u), n * sizeof(unsigned)));
  fetch_uint<<<1, n>>>(tu, d_u, n);
  CK(cudaGetLastError());
  CU(cuMemcpyDtoH(vals_back.data(), reinterpret_cast<CUdeviceptr>(d_u), n * sizeof(unsigned)));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += vals_back[i] != vals[i] + 1;
  EXPECT(bad == 0, "%d integer fetches wrong", bad);
  printf("driver integer texture %d: wrong %d\n", n, bad);

  CU(cuTexObjectDestroy(t));
  CU(cuTexObjectDestroy(tl));
  CU(cuTexObjectDestroy(tu));
  CU(cuSurfObjectDestroy(s));
  CU(cuArrayDestroy(a));
  CU(cuArrayDestroy(u));
  CU(cuMemFree(reinterpret_cast<CUdeviceptr>(d_out)));
  CU(cuMemFree(reinterpret_cast<CUdeviceptr>(d_u)));
  return finish();
}
