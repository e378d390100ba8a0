// Driver API pitched memory: cuMemAllocPitch, cuMemcpy2D in every direction
// with offsets, cuMemsetD2D8, and the errors of a missing CUDA array and bad sizes.
#include <vector>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  const size_t width = 100, height = 7;
  CUdeviceptr d;
  size_t pitch = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&d, &pitch, width, height, 3));
  CU_OK(cuMemAllocPitch(&d, &pitch, width, height, 4));
  CHECK(pitch >= width);

  std::vector<unsigned char> host(width * height), back(width * height, 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7);
  CU_OK(cuMemsetD2D8(d, pitch, 0xee, width, height));
  // Rows 1.. of the host image into rows 2.. of the device, from column 10.
  CUDA_MEMCPY2D up{};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = host.data();
  up.srcPitch = width;
  up.srcY = 1;
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = d;
  up.dstPitch = pitch;
  up.dstXInBytes = 10;
  up.dstY = 2;
  up.WidthInBytes = width - 10;
  up.Height = height - 2;
  CU_OK(cuMemcpy2D(&up));
  CUDA_MEMCPY2D down{};
  down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  down.srcDevice = d;
  down.srcPitch = pitch;
  down.dstMemoryType = CU_MEMORYTYPE_HOST;
  down.dstHost = back.data();
  down.dstPitch = width;
  down.WidthInBytes = width;
  down.Height = height;
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  CU_OK(cuMemcpy2DAsync(&down, stream));
  CU_OK(cuStreamSynchronize(stream));
  int bad = 0;
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x) {
      unsigned char want = y >= 2 && x >= 10 ? host[(y - 1) * width + (x - 10)] : 0xee;
      bad += back[y * width + x] != want;
    }
  CHECK(bad == 0);

  CUDA_MEMCPY2D to_array = up;
  to_array.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuMemcpy2D(&to_array));  // no array named
  CUDA_MEMCPY2D too_wide = down;
  too_wide.WidthInBytes = pitch + 1;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&too_wide));

  CU_OK(cuStreamDestroy(stream));
  CU_OK(cuMemFree(d));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  return finish();
}
