// Driver API tensor maps: tiled, im2col and im2col-wide descriptors of a
// tensor in device memory, the errors of arguments the driver documents as
// invalid (and of addresses that are not the session's), and
// cuTensorMapReplaceAddress giving what encoding at the new address gives.
#include <cstring>

#include "driver_check.h"

static bool same(const CUtensorMap& a, const CUtensorMap& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  // A 64 x 32 float matrix, rows padded to 320 bytes, and a second one.
  CUdeviceptr a = 0, b = 0;
  CU_OK(cuMemAlloc(&a, 320 * 32));
  CU_OK(cuMemAlloc(&b, 320 * 32));
  void* pa = reinterpret_cast<void*>(a);
  void* pb = reinterpret_cast<void*>(b);
  cuuint64_t dims[2] = {64, 32};
  cuuint64_t strides[1] = {320};
  cuuint32_t box[2] = {16, 8};
  cuuint32_t ones[2] = {1, 1};
  auto tiled = [&](CUtensorMap* m, void* at, const cuuint64_t* d, const cuuint64_t* s, const cuuint32_t* bx,
                   const cuuint32_t* es, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE,
                   CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32, cuuint32_t rank = 2) {
    return cuTensorMapEncodeTiled(m, type, rank, at, d, s, bx, es, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CUtensorMap ma, ma2, mb, other;
  CU_OK(tiled(&ma, pa, dims, strides, box, ones));
  // Rank 1: globalStrides holds no element but is given, as cuDNN does, and
  // must reach the driver given (which refuses a null one).
  CUtensorMap rank1;
  CU_OK(tiled(&rank1, pa, dims, strides, box, ones, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1));
  CHECK(tiled(&rank1, pa, dims, nullptr, box, ones, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1) ==
        CUDA_ERROR_INVALID_VALUE);
  CU_OK(tiled(&ma2, pa, dims, strides, box, ones));
  CU_OK(tiled(&mb, pb, dims, strides, box, ones));
  CHECK(same(ma, ma2));   // a descriptor depends on its arguments only
  CHECK(!same(ma, mb));   // and on the address
  cuuint32_t box2[2] = {32, 8};
  CU_OK(tiled(&other, pa, dims, strides, box2, ones));
  CHECK(!same(ma, other));

  // Replacing the address gives the descriptor encoded at the new one.
  CUtensorMap moved = ma;
  CU_OK(cuTensorMapReplaceAddress(&moved, pb));
  CHECK(same(moved, mb));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTensorMapReplaceAddress(&moved, reinterpret_cast<void*>(b + 8)));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTensorMapReplaceAddress(nullptr, pb));
  static int host_word;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTensorMapReplaceAddress(&moved, &host_word));

  // Arguments cuda.h documents as invalid.
  cuuint64_t bad_stride[1] = {328};            // not a multiple of 16
  cuuint32_t bad_box[2] = {3, 8};              // 12 bytes: not a multiple of 16
  cuuint32_t big_box[2] = {512, 8};            // more than 256
  cuuint32_t zero_es[2] = {1, 0};
  cuuint64_t zero_dim[2] = {64, 0};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, bad_stride, box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, strides, bad_box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, strides, big_box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, strides, box, zero_es));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, zero_dim, strides, box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, reinterpret_cast<void*>(a + 4), dims, strides, box, ones));
  // 16 floats (64 bytes) do not fit a 32-byte swizzle; 8 do.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, strides, box, ones, CU_TENSOR_MAP_SWIZZLE_32B));
  cuuint32_t box8[2] = {8, 8};
  CU_OK(tiled(&other, pa, dims, strides, box8, ones, CU_TENSOR_MAP_SWIZZLE_32B));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims, strides, box, ones, CU_TENSOR_MAP_SWIZZLE_NONE,
                                            CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0));
  cuuint64_t dims6[6] = {1, 1, 1, 1, 1, 1};
  cuuint64_t strides6[5] = {16, 16, 16, 16, 16};
  cuuint32_t ones6[6] = {1, 1, 1, 1, 1, 1};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, dims6, strides6, ones6, ones6, CU_TENSOR_MAP_SWIZZLE_NONE,
                                            CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 6));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pa, nullptr, strides, box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(nullptr, pa, dims, strides, box, ones));
  // Memory that is not the application's device memory.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, &host_word, dims, strides, box, ones));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, reinterpret_cast<void*>(0x10000), dims, strides, box, ones));

  // im2col: an NHWC tensor of 2 x 4 x 4 x 8 floats.
  cuuint64_t nhwc[4] = {8, 4, 4, 2};
  cuuint64_t nhwc_strides[3] = {32, 128, 512};
  cuuint32_t es4[4] = {1, 1, 1, 1};
  int lower[2] = {-1, -1}, upper[2] = {1, 1};
  CUdeviceptr t = 0;
  CU_OK(cuMemAlloc(&t, 1024));
  void* pt = reinterpret_cast<void*>(t);
  CUtensorMap ic1, ic2;
  auto im2col = [&](CUtensorMap* m, const int* lo, const int* up, cuuint32_t channels) {
    return cuTensorMapEncodeIm2col(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, pt, nhwc, nhwc_strides, lo, up, channels,
                                   16, es4, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CU_OK(im2col(&ic1, lower, upper, 8));
  CU_OK(im2col(&ic2, lower, upper, 8));
  CHECK(same(ic1, ic2));
  int far[2] = {-200, 0};  // rank 4: offsets within [-128, 127]
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, im2col(&ic2, far, upper, 8));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, im2col(&ic2, lower, upper, 300));  // channels <= 256
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, im2col(&ic2, nullptr, upper, 8));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuTensorMapEncodeIm2col(&ic2, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, pt, nhwc, nhwc_strides, lower, upper,
                                    8, 16, es4, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  CUtensorMap icm = ic1;
  CU_OK(cuTensorMapReplaceAddress(&icm, pt));
  CHECK(same(icm, ic1));

  auto wide = [&](CUtensorMap* m, CUtensorMapIm2ColWideMode mode, cuuint32_t pixels) {
    return cuTensorMapEncodeIm2colWide(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, pt, nhwc, nhwc_strides, -1, 1, 8,
                                       pixels, es4, CU_TENSOR_MAP_INTERLEAVE_NONE, mode, CU_TENSOR_MAP_SWIZZLE_NONE,
                                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CUtensorMap w1, w2;
  CU_OK(wide(&w1, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, 32));
  CU_OK(wide(&w2, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128, 32));
  CHECK(!same(w1, w2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, wide(&w2, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, 2048));  // pixels <= 1024

  // Freed memory is no longer the session's.
  CU_OK(cuMemFree(b));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, tiled(&other, pb, dims, strides, box, ones));
  CU_OK(cuMemFree(a));
  CU_OK(cuMemFree(t));
  return finish();
}
