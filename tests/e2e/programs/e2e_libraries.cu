// Libraries through both APIs: cudaLibrary* and cuLibrary* load the
// driver-API kernels (PTX, fat binary), enumerate and look up kernels and
// globals; a library's kernel launches through cudaLaunchKernel and
// cuLaunchKernel(Ex) with attributes; a runtime cudaKernel_t launches
// through cuLaunchKernel; kernel attributes per device; cluster occupancy
// through the driver; bad handles.
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "driver_check.h"

__global__ void fill(int* out, int value) {
  if (threadIdx.x == 0) out[blockIdx.x] = value;
}

int main() {
  std::ifstream in(RGPU_PTX_FILE);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  // The runtime's libraries.
  cudaLibrary_t lib;
  OK(cudaLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned count = 0;
  OK(cudaLibraryGetKernelCount(&count, lib));
  CHECK(count == 2);
  std::vector<cudaKernel_t> kernels(count);
  OK(cudaLibraryEnumerateKernels(kernels.data(), count, lib));
  std::set<std::string> names;
  for (cudaKernel_t k : kernels) {
    const char* name = nullptr;
    OK(cudaFuncGetName(&name, reinterpret_cast<void*>(k)));
    if (name) names.insert(name);
  }
  CHECK(names == (std::set<std::string>{"scale", "vadd"}));
  cudaKernel_t vadd;
  OK(cudaLibraryGetKernel(&vadd, lib, "vadd"));
  EXPECT_STATUS(cudaErrorSymbolNotFound, cudaLibraryGetKernel(&vadd, lib, "no_such_kernel"));
  size_t offset = 0, size = 0;
  OK(cudaFuncGetParamInfo(reinterpret_cast<void*>(vadd), 3, &offset, &size));
  CHECK(offset == 24 && size == 4);

  const int n = 256;
  float *a, *b, *c;
  OK(cudaMalloc(&a, n * sizeof(float)));
  OK(cudaMalloc(&b, n * sizeof(float)));
  OK(cudaMalloc(&c, n * sizeof(float)));
  int count_arg = n;
  void* args[] = {&a, &b, &c, &count_arg};
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args, 0, nullptr));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(2);
  config.blockDim = dim3(128);
  cudaLaunchAttribute priority;
  std::memset(&priority, 0, sizeof priority);
  priority.id = cudaLaunchAttributePriority;
  priority.val.priority = 0;
  config.attrs = &priority;
  config.numAttrs = 1;
  OK(cudaLaunchKernelExC(&config, reinterpret_cast<void*>(vadd), args));
  OK(cudaKernelSetAttributeForDevice(vadd, cudaFuncAttributeMaxDynamicSharedMemorySize, 32 * 1024, 0));
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args, 32 * 1024, nullptr));
  OK(cudaDeviceSynchronize());
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLibraryGetKernelCount(nullptr, lib));
  // A managed variable: the host reaches it at its device address, and what
  // it writes there is what a copy from the device reads; a plain variable
  // or an unknown name is not one.
  void* managed = nullptr;
  size_t managed_size = 0;
  OK(cudaLibraryGetManaged(&managed, &managed_size, lib, "managed_total"));
  CHECK(managed != nullptr && managed_size == sizeof(int));
  *static_cast<int*>(managed) = 4242;
  int managed_copy = 0;
  OK(cudaMemcpy(&managed_copy, managed, sizeof managed_copy, cudaMemcpyDeviceToHost));
  CHECK(managed_copy == 4242);
  managed_copy = 77;
  OK(cudaMemcpy(managed, &managed_copy, sizeof managed_copy, cudaMemcpyHostToDevice));
  CHECK(*static_cast<int*>(managed) == 77);
  EXPECT_STATUS(cudaErrorSymbolNotFound, cudaLibraryGetManaged(&managed, &managed_size, lib, "device_total"));
  EXPECT_STATUS(cudaErrorSymbolNotFound, cudaLibraryGetManaged(&managed, nullptr, lib, "no_such_variable"));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLibraryGetManaged(nullptr, nullptr, lib, "managed_total"));
  // No device here has unified function pointers: the driver's answer is "not found".
  void* unified = nullptr;
  EXPECT_STATUS(cudaErrorSymbolNotFound, cudaLibraryGetUnifiedFunction(&unified, lib, "vadd"));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaLibraryGetUnifiedFunction(nullptr, lib, "vadd"));
  int unified_pointers = -1;
  OK(cudaDeviceGetAttribute(&unified_pointers, static_cast<cudaDeviceAttr>(129), 0));
  CHECK(unified_pointers == 0);
  OK(cudaLibraryUnload(lib));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaLibraryGetManaged(&managed, &managed_size, lib, "managed_total"));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaLibraryGetUnifiedFunction(&unified, lib, "vadd"));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaLibraryUnload(lib));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaLibraryGetKernelCount(&count, lib));
  OK(cudaLibraryLoadFromFile(&lib, RGPU_FATBIN_FILE, nullptr, nullptr, 0, nullptr, nullptr, 0));
  OK(cudaLibraryGetKernel(&vadd, lib, "vadd"));
  OK(cudaLaunchKernel(reinterpret_cast<void*>(vadd), dim3(2), dim3(128), args, 0, nullptr));
  OK(cudaDeviceSynchronize());
  OK(cudaLibraryUnload(lib));
  // Library options: the "binary is preserved" hint is taken (for data, not
  // for a file), the host table of universal functions is not.
  cudaLibraryOption preserved = cudaLibraryBinaryIsPreserved;
  void* no_value = nullptr;
  OK(cudaLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, &preserved, &no_value, 1));
  OK(cudaLibraryUnload(lib));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaLibraryLoadFromFile(&lib, RGPU_PTX_FILE, nullptr, nullptr, 0, &preserved, &no_value, 1));
  cudaLibraryOption table = cudaLibraryHostUniversalFunctionAndDataTable;
  EXPECT_STATUS(cudaErrorNotSupported,
                cudaLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, &table, &no_value, 1));
  EXPECT_STATUS(cudaErrorFileNotFound,
                cudaLibraryLoadFromFile(&lib, "/nonexistent/kernels.ptx", nullptr, nullptr, 0, nullptr, nullptr, 0));

  // The driver's libraries.
  CU_OK(cuInit(0));
  CUlibrary library;
  CUlibraryOption cu_preserved = CU_LIBRARY_BINARY_IS_PRESERVED;
  CU_OK(cuLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, &cu_preserved, &no_value, 1));
  CU_OK(cuLibraryUnload(library));
  CU_OK(cuLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CU_OK(cuLibraryGetKernelCount(&count, library));
  CHECK(count == 2);
  CUdeviceptr cu_managed = 0;
  CU_OK(cuLibraryGetManaged(&cu_managed, nullptr, library, "managed_total"));
  CHECK(cu_managed != 0);
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&cu_managed, nullptr, library, "device_total"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuLibraryGetUnifiedFunction(&unified, library, "vadd"));
  int cu_unified = -1;
  CU_OK(cuDeviceGetAttribute(&cu_unified, CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, 0));
  CHECK(cu_unified == 0);
  CUkernel first[1];
  CU_OK(cuLibraryEnumerateKernels(first, 1, library));
  CUlibrary owner;
  CU_OK(cuKernelGetLibrary(&owner, first[0]));
  CHECK(owner == library);
  // The runtime finds the new driver functions by name too.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  OK(cudaGetDriverEntryPointByVersion("cuKernelGetLibrary", &entry, CUDART_VERSION, cudaEnableDefault, &found));
  CHECK(found == cudaDriverEntryPointSuccess && entry != nullptr);
  owner = nullptr;
  if (entry) CU_OK(reinterpret_cast<CUresult (*)(CUlibrary*, CUkernel)>(entry)(&owner, first[0]));
  CHECK(owner == library);
  CUmodule module;
  CU_OK(cuLibraryGetModule(&module, library));
  CU_OK(cuModuleGetFunctionCount(&count, module));
  CHECK(count == 2);
  CUfunction functions[2] = {};
  CU_OK(cuModuleEnumerateFunctions(functions, 2, module));
  CHECK(functions[0] && functions[1]);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleEnumerateFunctions(nullptr, 2, module));
  CUkernel kernel;
  CU_OK(cuLibraryGetKernel(&kernel, library, "vadd"));
  CU_OK(cuLaunchCooperativeKernel(reinterpret_cast<CUfunction>(kernel), 2, 1, 1, 128, 1, 1, 0, nullptr, args));
  // The legacy execution control: shape, parameters one by one, launch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // still exported, still implemented
  CUfunction legacy = reinterpret_cast<CUfunction>(kernel);
  CU_OK(cuFuncSetBlockShape(legacy, 128, 1, 1));
  CU_OK(cuFuncSetSharedSize(legacy, 0));
  CU_OK(cuParamSetv(legacy, 0, &a, sizeof a));
  CU_OK(cuParamSetv(legacy, 8, &b, sizeof b));
  CU_OK(cuParamSetv(legacy, 16, &c, sizeof c));
  CU_OK(cuParamSeti(legacy, 24, n));
  CU_OK(cuParamSetSize(legacy, 28));
  CU_OK(cuLaunchGrid(legacy, 2, 1));
  CU_OK(cuLaunchGridAsync(legacy, 2, 1, nullptr));
  CU_OK(cuParamSetf(legacy, 24, 1.0f));
  CU_OK(cuLaunch(legacy));
  CU_OK(cuParamSetSize(legacy, 64));  // longer than vadd's parameters
  EXPECT_CU(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cuLaunch(legacy));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuParamSeti(legacy, 1 << 20, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncSetBlockShape(legacy, 0, 1, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunch(reinterpret_cast<CUfunction>(&count)));
#pragma GCC diagnostic pop
  EXPECT_CU(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            cuLaunchCooperativeKernel(reinterpret_cast<CUfunction>(kernel), 1 << 16, 1, 1, 128, 1, 1, 0, nullptr,
                                      args));
  int max_threads = 0;
  CU_OK(cuKernelGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, 0));
  CHECK(max_threads > 0);
  CU_OK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 16 * 1024, kernel, 0));
  CU_OK(cuKernelSetCacheConfig(kernel, CU_FUNC_CACHE_PREFER_SHARED, 0));
  CU_OK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), 2, 1, 1, 128, 1, 1, 16 * 1024, nullptr, args,
                       nullptr));
  CUlaunchAttribute attrs[2];
  std::memset(attrs, 0, sizeof attrs);
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = 2;
  attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = 2;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  CU_OK(cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(kernel), args, nullptr));
  int clusters = 0, cluster_size = 0;
  CU_OK(cuOccupancyMaxActiveClusters(&clusters, reinterpret_cast<CUfunction>(kernel), &cfg));
  CHECK(clusters > 0);
  CU_OK(cuOccupancyMaxPotentialClusterSize(&cluster_size, reinterpret_cast<CUfunction>(kernel), &cfg));
  CHECK(cluster_size > 0);
  // The test backend fits min(32, 2048 / block size) blocks on each of 4
  // multiprocessors: 1024 threads twice reach the most resident threads.
  int min_grid = 0, best_block = 0;
  CU_OK(cuOccupancyMaxPotentialBlockSize(&min_grid, &best_block, reinterpret_cast<CUfunction>(kernel), nullptr, 0, 0));
  CHECK(best_block == 1024 && min_grid == 8);
  CU_OK(cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid, &best_block, reinterpret_cast<CUfunction>(kernel),
                                                  [](int size) -> size_t { return size * 4; }, 0, 96,
                                                  CU_OCCUPANCY_DEFAULT));
  CHECK(best_block == 64 && min_grid == 4 * 32);  // 32 blocks of 64 beat 21 of 96
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuOccupancyMaxPotentialBlockSize(nullptr, &best_block, reinterpret_cast<CUfunction>(kernel), nullptr, 0,
                                             0));
  size_t smem = 0;
  CU_OK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, reinterpret_cast<CUfunction>(kernel), 1, 128));
  CHECK(smem > 0);
  CU_OK(cuCtxSynchronize());
  CU_OK(cuLibraryUnload(library));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernelCount(&count, library));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuKernelGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel, 0));

  // The driver's names for a stream's device, event record flags, copied
  // stream attributes.
  CUstream cu_stream, cu_copy;
  CU_OK(cuStreamCreate(&cu_stream, CU_STREAM_NON_BLOCKING));
  CU_OK(cuStreamCreate(&cu_copy, CU_STREAM_DEFAULT));
  CUdevice stream_device = -1;
  CU_OK(cuStreamGetDevice(cu_stream, &stream_device));
  CHECK(stream_device == 0);
  CUevent cu_event;
  CU_OK(cuEventCreate(&cu_event, CU_EVENT_DISABLE_TIMING));
  CU_OK(cuEventRecordWithFlags(cu_event, cu_stream, CU_EVENT_RECORD_DEFAULT));
  CU_OK(cuEventSynchronize(cu_event));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventRecordWithFlags(reinterpret_cast<CUevent>(&count), cu_stream, 0));
  CU_OK(cuStreamCopyAttributes(cu_copy, cu_stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamCopyAttributes(cu_copy, reinterpret_cast<CUstream>(&count)));
  CU_OK(cuEventDestroy(cu_event));
  CU_OK(cuStreamDestroy(cu_stream));
  CU_OK(cuStreamDestroy(cu_copy));

  // A runtime kernel handle launches through the driver.
  int* out;
  OK(cudaMalloc(&out, 4 * sizeof(int)));
  cudaKernel_t fill_kernel;
  OK(cudaGetKernel(&fill_kernel, reinterpret_cast<void*>(fill)));
  int value = 7;
  void* fill_args[] = {&out, &value};
  CU_OK(cuLaunchKernel(reinterpret_cast<CUfunction>(fill_kernel), 4, 1, 1, 32, 1, 1, 0, nullptr, fill_args,
                       nullptr));
  cudaFunction_t fill_function;
  OK(cudaGetFuncBySymbol(&fill_function, reinterpret_cast<void*>(fill)));
  CU_OK(cuLaunchKernel(reinterpret_cast<CUfunction>(fill_function), 4, 1, 1, 32, 1, 1, 0, nullptr, fill_args,
                       nullptr));
  CU_OK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           reinterpret_cast<CUfunction>(fill_function)));
  CHECK(max_threads > 0);
  const char* fill_name = nullptr;
  CU_OK(cuFuncGetName(&fill_name, reinterpret_cast<CUfunction>(fill_function)));
  CHECK(fill_name && std::string(fill_name) == "_Z4fillPii");
  size_t fill_offset = 0, fill_size = 0;
  CU_OK(cuFuncGetParamInfo(reinterpret_cast<CUfunction>(fill_function), 1, &fill_offset, &fill_size));
  CHECK(fill_offset == 8 && fill_size == 4);
  OK(cudaDeviceSynchronize());
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cuLaunchKernel(reinterpret_cast<CUfunction>(&value), 1, 1, 1, 32, 1, 1, 0, nullptr, fill_args, nullptr));
  OK(cudaFree(out));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaFree(c));
  return finish();
}
