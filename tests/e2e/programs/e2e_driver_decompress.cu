// cuMemBatchDecompressAsync on a server whose GPUs have no decompression
// engine (the test backend's): valid batches reach the server and get its
// CUDA_ERROR_NOT_SUPPORTED for the batch as a whole; operations naming
// memory that is not the application's device memory are refused with
// their index.
#include <cstdint>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  CUdeviceptr src = 0, dst = 0, act = 0;
  CU_OK(cuMemAlloc(&src, 4096));
  CU_OK(cuMemAlloc(&dst, 16384));
  CU_OK(cuMemAlloc(&act, 64));
  CUmemDecompressParams ops[2] = {};
  for (int i = 0; i < 2; ++i) {
    ops[i].srcNumBytes = 2048;
    ops[i].dstNumBytes = 8192;
    ops[i].src = reinterpret_cast<void*>(src + i * 2048);
    ops[i].dst = reinterpret_cast<void*>(dst + i * 8192);
    ops[i].dstActBytes = reinterpret_cast<cuuint32_t*>(act + i * 4);
    ops[i].algo = CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE;
  }
  size_t failed = 0;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemBatchDecompressAsync(ops, 2, 0, &failed, stream));
  CHECK(failed == SIZE_MAX);
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemBatchDecompressAsync(ops, 2, 0, nullptr, 0));

  // The second operation writes past its allocation, then into host memory.
  CUmemDecompressParams bad[2] = {ops[0], ops[1]};
  bad[1].dstNumBytes = 8193;
  failed = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemBatchDecompressAsync(bad, 2, 0, &failed, stream));
  CHECK(failed == 1);
  static cuuint32_t host_word;
  bad[1] = ops[1];
  bad[1].dstActBytes = &host_word;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemBatchDecompressAsync(bad, 2, 0, &failed, stream));
  CHECK(failed == 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemBatchDecompressAsync(ops, 0, 0, &failed, stream));
  CHECK(failed == SIZE_MAX);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemBatchDecompressAsync(ops, 2, 1, &failed, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemBatchDecompressAsync(nullptr, 2, 0, &failed, stream));
  CU_OK(cuStreamSynchronize(stream));
  CU_OK(cuStreamDestroy(stream));
  CU_OK(cuMemFree(src));
  CU_OK(cuMemFree(dst));
  CU_OK(cuMemFree(act));
  return finish();
}
