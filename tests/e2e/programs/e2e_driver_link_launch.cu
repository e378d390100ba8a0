// Driver modules and launches: a JIT link of PTX on the server (from a file
// and from memory), the linked image loaded and launched, the pre-CUDA 4
// launch API, cooperative launches, the occupancy calculator, and bad
// handles.
#include <fstream>
#include <iterator>
#include <string>

#include "driver_check.h"

#undef cuLinkCreate
#undef cuLinkAddData
extern "C" CUresult CUDAAPI cuLinkCreate(unsigned numOptions, CUjit_option* options, void** values, CUlinkState* out);
extern "C" CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                          const char* name, unsigned numOptions, CUjit_option* options, void** values);

static size_t CUDA_CB smem_for(int block_size) { return static_cast<size_t>(block_size) * 8; }

int main() {
  CU_OK(cuInit(0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  std::ifstream in(RGPU_PTX_FILE);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // From a file, with an option the linker may take.
  CUlinkState link;
  char log[256] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof log)};
  CU_OK(cuLinkCreate(2, options, values, &link));
  CU_OK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, RGPU_PTX_FILE, 0, nullptr, nullptr));
  void* image = nullptr;
  size_t image_size = 0;
  CU_OK(cuLinkComplete(link, &image, &image_size));
  CHECK(image != nullptr && image_size > 0);
  CUmodule module;
  CU_OK(cuModuleLoadData(&module, image));
  CU_OK(cuLinkDestroy(link));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLinkComplete(link, &image, &image_size));
  // From memory, through the legacy names.
  CU_OK(cuLinkCreate(0, nullptr, nullptr, &link));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLinkComplete(link, &image, &image_size));
  CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx.data(), ptx.size() + 1, "kernels.ptx", 0, nullptr, nullptr));
  CU_OK(cuLinkComplete(link, &image, &image_size));
  CUmodule module2;
  CU_OK(cuModuleLoadData(&module2, image));
  CU_OK(cuLinkDestroy(link));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(link));
  EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/no/such.ptx", 0, nullptr, nullptr));

  unsigned count = 0;
  CU_OK(cuModuleGetFunctionCount(&count, module));
  CHECK(count == 2);
  CUfunction vadd;
  CU_OK(cuModuleGetFunction(&vadd, module, "vadd"));

  const int n = 1000;
  CUdeviceptr a, b, c;
  CU_OK(cuMemAlloc(&a, n * sizeof(float)));
  CU_OK(cuMemAlloc(&b, n * sizeof(float)));
  CU_OK(cuMemAlloc(&c, n * sizeof(float)));
  void* args[] = {&a, &b, &c, const_cast<int*>(&n)};
  CU_OK(cuLaunchCooperativeKernel(vadd, 4, 1, 1, 256, 1, 1, 0, nullptr, args));
  EXPECT_CU(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            cuLaunchCooperativeKernel(vadd, 1 << 20, 1, 1, 256, 1, 1, 0, nullptr, args));

  // The pre-CUDA 4 launch: shape, parameter buffer, grid.
  CU_OK(cuFuncSetBlockShape(vadd, 256, 1, 1));
  CU_OK(cuFuncSetSharedSize(vadd, 0));
  CU_OK(cuParamSetSize(vadd, 28));
  CU_OK(cuParamSetv(vadd, 0, &a, sizeof a));
  CU_OK(cuParamSetv(vadd, 8, &b, sizeof b));
  CU_OK(cuParamSetv(vadd, 16, &c, sizeof c));
  CU_OK(cuParamSeti(vadd, 24, n));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuParamSetf(vadd, -4, 1.0f));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuParamSetv(vadd, 32760, &a, sizeof a));
  CU_OK(cuLaunchGrid(vadd, 4, 1));
  CU_OK(cuLaunchGridAsync(vadd, 4, 1, nullptr));
  CU_OK(cuLaunch(vadd));
  CU_OK(cuCtxSynchronize());
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(vadd, 0, 1, 1));

  // Occupancy: the server's calculator, searched here for the best block.
  int min_grid = 0, block = 0, sms = 0, blocks = 0;
  CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
  CU_OK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, vadd, nullptr, 0, 0));
  CHECK(block > 0 && block <= 1024 && block % 32 == 0);
  CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vadd, block, 0));
  CHECK(min_grid == blocks * sms);
  CU_OK(cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid, &block, vadd, smem_for, 0, 200, CU_OCCUPANCY_DEFAULT));
  CHECK(block > 0 && block <= 200);
  size_t dyn = 0;
  CU_OK(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, vadd, 2, 128));
  CHECK(dyn > 0);
  CU_OK(cuFuncSetSharedMemConfig(vadd, CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));

  // Bad handles.
  CUfunction bogus = reinterpret_cast<CUfunction>(&count);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuFuncSetBlockShape(bogus, 1, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchGrid(bogus, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchCooperativeKernel(bogus, 1, 1, 1, 1, 1, 1, 0, nullptr, args));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxPotentialBlockSize(&min_grid, &block, bogus, nullptr, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuOccupancyAvailableDynamicSMemPerBlock(&dyn, bogus, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunctionCount(&count, reinterpret_cast<CUmodule>(&count)));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLinkAddData(reinterpret_cast<CUlinkState>(&count), CU_JIT_INPUT_PTX,
                                                     ptx.data(), ptx.size(), nullptr, 0, nullptr, nullptr));

  CU_OK(cuMemFree(a));
  CU_OK(cuMemFree(b));
  CU_OK(cuMemFree(c));
  CU_OK(cuModuleUnload(module));
  CU_OK(cuModuleUnload(module2));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  return finish();
}
