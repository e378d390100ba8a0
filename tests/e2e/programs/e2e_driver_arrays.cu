// CUDA arrays through the driver API: cuArrayCreate / cuArray3DCreate and
// their descriptors, the linear HtoA/AtoH/DtoA/AtoD/AtoA copies at byte
// offsets, cuMemcpy2D, cuMemcpy3D and batches with array sides, mipmapped arrays,
// texture and surface objects, and bad handles.
#include <cstdint>
#include <vector>

#include "driver_check.h"

// The CUDA 12.8 binding, which names the copy that failed (cuda.h binds the
// name to the _v2 function).
extern "C" CUresult legacy_3d_batch(size_t, CUDA_MEMCPY3D_BATCH_OP*, size_t*, unsigned long long, CUstream) __asm__(
    "cuMemcpy3DBatchAsync");

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  // A 2-D array of ushort2 (4-byte elements), 24 x 6.
  const size_t w = 24, h = 6, row = w * 4;
  CUDA_ARRAY_DESCRIPTOR ad{w, h, CU_AD_FORMAT_UNSIGNED_INT16, 2};
  CUarray a, b;
  CU_OK(cuArrayCreate(&a, &ad));
  CUDA_ARRAY3D_DESCRIPTOR ad3{w, h, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2, CUDA_ARRAY3D_SURFACE_LDST};
  CU_OK(cuArray3DCreate(&b, &ad3));
  CUDA_ARRAY_DESCRIPTOR got{};
  CU_OK(cuArrayGetDescriptor(&got, a));
  CHECK(got.Width == w && got.Height == h && got.Format == CU_AD_FORMAT_UNSIGNED_INT16 && got.NumChannels == 2);
  CUDA_ARRAY3D_DESCRIPTOR got3{};
  CU_OK(cuArray3DGetDescriptor(&got3, b));
  CHECK(got3.Depth == 0 && got3.Flags == CUDA_ARRAY3D_SURFACE_LDST);
  CUDA_ARRAY_DESCRIPTOR three{w, h, CU_AD_FORMAT_FLOAT, 3};
  CUarray bad_array;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuArrayCreate(&bad_array, &three));

  // Linear copies at byte offsets stay within the first row, as on the
  // GPU: a copy running on into the next row is refused.
  std::vector<unsigned char> host(row * h), back(row * h, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 13 + 5);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoA(a, 0, host.data(), host.size()));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoA(a, 8, host.data(), row));
  CU_OK(cuMemcpyHtoA(a, 0, host.data(), row));
  CU_OK(cuMemcpyAtoA(b, 8, a, 8, row - 8));
  CUdeviceptr d;
  CU_OK(cuMemAlloc(&d, row));
  CU_OK(cuMemcpyAtoD(d, b, 8, row - 8));
  CU_OK(cuMemcpyDtoA(a, 0, d, row - 8));
  CU_OK(cuMemcpyAtoH(back.data(), a, 0, row - 8));
  CHECK(std::equal(back.begin(), back.begin() + row - 8, host.begin() + 8));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  CU_OK(cuMemcpyHtoAAsync(a, 0, host.data(), row, stream));
  CU_OK(cuMemcpyAtoHAsync(back.data(), a, 0, row, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(std::equal(back.begin(), back.begin() + row, host.begin()));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoA(a, row - 4, host.data(), 8));

  // cuMemcpy2D: a 3 x 2 element window of the host image into b at (5, 1).
  CUDA_MEMCPY2D up{};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = host.data();
  up.srcPitch = row;
  up.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  up.dstArray = b;
  up.dstXInBytes = 5 * 4;
  up.dstY = 1;
  up.WidthInBytes = 3 * 4;
  up.Height = 2;
  CU_OK(cuMemcpy2D(&up));
  std::vector<unsigned char> window(3 * 4 * 2, 0);
  CUDA_MEMCPY2D down{};
  down.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  down.srcArray = b;
  down.srcXInBytes = 5 * 4;
  down.srcY = 1;
  down.dstMemoryType = CU_MEMORYTYPE_HOST;
  down.dstHost = window.data();
  down.dstPitch = 3 * 4;
  down.WidthInBytes = 3 * 4;
  down.Height = 2;
  CU_OK(cuMemcpy2DAsync(&down, stream));
  CU_OK(cuStreamSynchronize(stream));
  int bad = 0;
  for (size_t y = 0; y < 2; ++y)
    for (size_t x = 0; x < 12; ++x) bad += window[y * 12 + x] != host[y * row + x];
  CHECK(bad == 0);
  down.srcY = h - 1;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&down));

  // cuMemcpy3D: a 3-D float array through pitched device memory.
  CUDA_ARRAY3D_DESCRIPTOR vd{8, 4, 3, CU_AD_FORMAT_FLOAT, 1, 0};
  CUarray v;
  CU_OK(cuArray3DCreate(&v, &vd));
  std::vector<float> vol(8 * 4 * 3), vol_back(vol.size(), -1.f);
  for (size_t i = 0; i < vol.size(); ++i) vol[i] = 0.25f * static_cast<float>(i);
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = vol.data();
  c.srcPitch = 8 * sizeof(float);
  c.srcHeight = 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = v;
  c.WidthInBytes = 8 * sizeof(float);
  c.Height = 4;
  c.Depth = 3;
  CU_OK(cuMemcpy3D(&c));
  CUdeviceptr lin;
  size_t pitch;
  CU_OK(cuMemAllocPitch(&lin, &pitch, 8 * sizeof(float), 4 * 3, 4));
  CUDA_MEMCPY3D c2{};
  c2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c2.srcArray = v;
  c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.dstDevice = lin;
  c2.dstPitch = pitch;
  c2.dstHeight = 4;
  c2.WidthInBytes = 8 * sizeof(float);
  c2.Height = 4;
  c2.Depth = 3;
  CU_OK(cuMemcpy3DAsync(&c2, stream));
  CUDA_MEMCPY3D_PEER c3{};
  c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.srcDevice = lin;
  c3.srcPitch = pitch;
  c3.srcHeight = 4;
  c3.dstMemoryType = CU_MEMORYTYPE_HOST;
  c3.dstHost = vol_back.data();
  c3.dstPitch = 8 * sizeof(float);
  c3.dstHeight = 4;
  c3.WidthInBytes = 8 * sizeof(float);
  c3.Height = 4;
  c3.Depth = 3;
  CU_OK(cuMemcpy3DPeerAsync(&c3, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(vol_back == vol);
  c.Depth = 4;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&c));
  // Batched: the second slice of v to the host.
  std::vector<float> slice(8 * 4, -1.f);
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  op.src.op.array.array = v;
  op.src.op.array.offset = {0, 0, 1};
  op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.dst.op.ptr.ptr = reinterpret_cast<CUdeviceptr>(slice.data());
  op.extent = {8, 4, 1};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  CU_OK(cuMemcpy3DBatchAsync(1, &op, 0, stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(std::equal(slice.begin(), slice.end(), vol.begin() + 8 * 4));
  // The legacy binding: the first copy runs, the second (empty) fails and is named.
  CUDA_MEMCPY3D_BATCH_OP two[2] = {op, op};
  two[0].src.op.array.offset = {0, 0, 2};
  two[1].extent = {0, 4, 1};
  std::fill(slice.begin(), slice.end(), -1.f);
  size_t failed = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, legacy_3d_batch(2, two, &failed, 0, stream));
  CHECK(failed == 1);
  CU_OK(cuStreamSynchronize(stream));
  CHECK(std::equal(slice.begin(), slice.end(), vol.begin() + 2 * 8 * 4));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, legacy_3d_batch(1, &op, &failed, 1, stream));
  CHECK(failed == SIZE_MAX);
  CU_OK(legacy_3d_batch(1, &op, &failed, 0, stream));
  CU_OK(cuStreamSynchronize(stream));

  // Mipmapped arrays.
  CUDA_ARRAY3D_DESCRIPTOR md{16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0};
  CUmipmappedArray m;
  CU_OK(cuMipmappedArrayCreate(&m, &md, 3));
  CUarray level;
  CU_OK(cuMipmappedArrayGetLevel(&level, m, 2));
  CU_OK(cuArray3DGetDescriptor(&got3, level));
  CHECK(got3.Width == 4 && got3.Height == 4 && got3.NumChannels == 4);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMipmappedArrayGetLevel(&level, m, 5));

  size_t max_width = 0;
  CU_OK(cuDeviceGetTexture1DLinearMaxWidth(&max_width, CU_AD_FORMAT_FLOAT, 4, 0));
  CHECK(max_width > 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(&max_width, CU_AD_FORMAT_FLOAT, 3, 0));

  // Texture and surface objects.
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = b;
  CUDA_TEXTURE_DESC tex{};
  tex.addressMode[0] = tex.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  tex.filterMode = CU_TR_FILTER_MODE_POINT;
  tex.flags = CU_TRSF_READ_AS_INTEGER;
  CUtexObject t;
  CU_OK(cuTexObjectCreate(&t, &res, &tex, nullptr));
  CUDA_TEXTURE_DESC tex_back{};
  CU_OK(cuTexObjectGetTextureDesc(&tex_back, t));
  CHECK(tex_back.flags == CU_TRSF_READ_AS_INTEGER && tex_back.addressMode[1] == CU_TR_ADDRESS_MODE_CLAMP);
  CUDA_RESOURCE_DESC res_back{};
  CU_OK(cuTexObjectGetResourceDesc(&res_back, t));
  CHECK(res_back.resType == CU_RESOURCE_TYPE_ARRAY && res_back.res.array.hArray == b);
  CUDA_RESOURCE_DESC pitched{};
  pitched.resType = CU_RESOURCE_TYPE_PITCH2D;
  pitched.res.pitch2D.devPtr = lin;
  pitched.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
  pitched.res.pitch2D.numChannels = 1;
  pitched.res.pitch2D.width = 8;
  pitched.res.pitch2D.height = 12;
  pitched.res.pitch2D.pitchInBytes = pitch;
  CUtexObject tp;
  CU_OK(cuTexObjectCreate(&tp, &pitched, &tex, nullptr));
  CU_OK(cuTexObjectGetResourceDesc(&res_back, tp));
  CHECK(res_back.res.pitch2D.format == CU_AD_FORMAT_FLOAT && res_back.res.pitch2D.pitchInBytes == pitch);
  CUDA_RESOURCE_VIEW_DESC view_back;
  CU_OK(cuTexObjectGetResourceViewDesc(&view_back, tp));
  CHECK(view_back.format == CU_RES_VIEW_FORMAT_NONE);
  // Rows may run past the allocation, as the driver allows, but each must fit its pitch.
  pitched.res.pitch2D.height = 13;
  CUtexObject too_tall;
  CU_OK(cuTexObjectCreate(&too_tall, &pitched, &tex, nullptr));
  CU_OK(cuTexObjectDestroy(too_tall));
  pitched.res.pitch2D.pitchInBytes = 16;
  CUtexObject too_wide;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&too_wide, &pitched, &tex, nullptr));
  pitched.res.pitch2D.pitchInBytes = pitch;
  CUsurfObject s;
  CU_OK(cuSurfObjectCreate(&s, &res));
  CU_OK(cuSurfObjectGetResourceDesc(&res_back, s));
  CHECK(res_back.res.array.hArray == b);
  res.res.array.hArray = a;  // not made for surfaces
  CUsurfObject s_bad;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuSurfObjectCreate(&s_bad, &res));
  CU_OK(cuSurfObjectDestroy(s));
  CU_OK(cuTexObjectDestroy(t));
  CU_OK(cuTexObjectDestroy(tp));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectDestroy(t));

  CU_OK(cuMipmappedArrayDestroy(m));
  CU_OK(cuArrayDestroy(v));
  CU_OK(cuArrayDestroy(b));
  CU_OK(cuArrayDestroy(a));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuArrayDestroy(a));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuArrayGetDescriptor(&got, a));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuMemcpyHtoA(a, 0, host.data(), 4));
  CU_OK(cuMemFree(lin));
  CU_OK(cuMemFree(d));
  CU_OK(cuStreamDestroy(stream));
  return finish();
}
