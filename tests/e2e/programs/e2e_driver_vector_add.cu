// Driver API only: cuInit, devices, a context, modules (PTX from a file and
// from memory, a cubin, a fat binary), kernel lookup, cuLaunchKernel with kernelParams and with
// the `extra` buffer, cuLaunchKernelEx, libraries, copies, memsets, streams,
// events and cuGetProcAddress.
// (The test backend validates launches but does not run them.)
#include <cstddef>
#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  int version = 0, count = 0;
  CU_OK(cuDriverGetVersion(&version));
  CHECK(version >= 13000);
  CU_OK(cuDeviceGetCount(&count));
  CHECK(count >= 1);
  CUdevice dev;
  CU_OK(cuDeviceGet(&dev, 0));
  char name[256];
  CU_OK(cuDeviceGetName(name, sizeof name, dev));
  CHECK(std::strlen(name) > 0);
  int major = 0, minor = 0, sms = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // still exported, still implemented
  CU_OK(cuDeviceComputeCapability(&major, &minor, dev));
#pragma GCC diagnostic pop
  CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CHECK(major >= 7 && sms > 0);
  size_t total = 0;
  CU_OK(cuDeviceTotalMem(&total, dev));
  CHECK(total > 0);
  CUuuid uuid;
  CU_OK(cuDeviceGetUuid(&uuid, dev));

  CUcontext ctx, current;
  CU_OK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CU_OK(cuCtxGetCurrent(&current));
  CHECK(current == ctx);
  CUdevice ctx_dev = -1;
  CU_OK(cuCtxGetDevice(&ctx_dev));
  CHECK(ctx_dev == dev);

  CUmodule from_file, from_data;
  CU_OK(cuModuleLoad(&from_file, RGPU_PTX_FILE));
  std::ifstream in(RGPU_PTX_FILE);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CU_OK(cuModuleLoadData(&from_data, ptx.c_str()));
  // A cubin (ELF) from a file, a fat binary from memory.
  CUmodule from_cubin, from_fatbin;
  CU_OK(cuModuleLoad(&from_cubin, RGPU_CUBIN_FILE));
  std::ifstream fatbin_in(RGPU_FATBIN_FILE, std::ios::binary);
  std::vector<char> fatbin((std::istreambuf_iterator<char>(fatbin_in)), std::istreambuf_iterator<char>());
  CU_OK(cuModuleLoadFatBinary(&from_fatbin, fatbin.data()));
  CUfunction from_each;
  CU_OK(cuModuleGetFunction(&from_each, from_cubin, "scale"));
  CU_OK(cuModuleGetFunction(&from_each, from_fatbin, "vadd"));
  CUfunction vadd, scale;
  CU_OK(cuModuleGetFunction(&vadd, from_data, "vadd"));
  CU_OK(cuModuleGetFunction(&scale, from_file, "scale"));
  // The test backend knows no variable sizes: only the lookup is checked.
  CUdeviceptr global = 0;
  CU_OK(cuModuleGetGlobal(&global, nullptr, from_data, "some_variable"));
  CHECK(global != 0);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleGetGlobal(&global, nullptr, reinterpret_cast<CUmodule>(&global), "x"));
  // The layout the server reported: struct {double; char} by value, then a pointer and an int.
  size_t offset = 1, size = 0;
  CU_OK(cuFuncGetParamInfo(scale, 0, &offset, &size));
  CHECK(offset == 0 && size == 16);
  CU_OK(cuFuncGetParamInfo(scale, 2, &offset, &size));
  CHECK(offset == 24 && size == 4);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(scale, 3, &offset, &size));
  const char* fname = nullptr;
  CU_OK(cuFuncGetName(&fname, vadd));
  CHECK(fname && std::string(fname) == "vadd");
  CUmodule owner;
  CU_OK(cuFuncGetModule(&owner, scale));
  CHECK(owner == from_file);
  int max_threads = 0;
  CU_OK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, vadd));
  CHECK(max_threads > 0);

  const int n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.f);
  for (int i = 0; i < n; ++i) a[i] = float(i), b[i] = float(2 * i);
  CUdeviceptr da, db, dc;
  CU_OK(cuMemAlloc(&da, n * sizeof(float)));
  CU_OK(cuMemAlloc(&db, n * sizeof(float)));
  CU_OK(cuMemAlloc(&dc, n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(da, a.data(), n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(db, b.data(), n * sizeof(float)));
  int nn = n;
  void* args[] = {&da, &db, &dc, &nn};
  CU_OK(cuLaunchKernel(vadd, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_OK(cuCtxSynchronize());

  // The same launch with the caller's own parameter buffer.
  struct {
    CUdeviceptr a, b, c;
    int n;
  } buffer{da, db, dc, n};
  // Exactly the kernel's parameters: the driver refuses a longer buffer.
  size_t buffer_size = offsetof(decltype(buffer), n) + sizeof(int);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &buffer_size,
                   CU_LAUNCH_PARAM_END};
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CU_OK(cuLaunchKernel(vadd, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, nullptr, extra));
  struct {
    double factor;
    char tag;
  } s{2.0, 1};
  void* scale_args[] = {&s, &dc, &nn};
  CU_OK(cuLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, scale_args, nullptr));

  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  CU_OK(cuLaunchKernelEx(&config, vadd, args, nullptr));

  // A library is a module here; its CUkernel launches as a CUfunction.
  CUlibrary library;
  CU_OK(cuLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel;
  CU_OK(cuLibraryGetKernel(&kernel, library, "vadd"));
  CUfunction kernel_function;
  CU_OK(cuKernelGetFunction(&kernel_function, kernel));
  CU_OK(cuLaunchKernel(kernel_function, 1, 1, 1, 64, 1, 1, 0, stream, args, nullptr));
  CUmodule library_module;
  CU_OK(cuLibraryGetModule(&library_module, library));
  CUfunction scale_again;
  CU_OK(cuModuleGetFunction(&scale_again, library_module, "scale"));
  CU_OK(cuLibraryUnload(library));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuKernelGetFunction(&kernel_function, kernel));

  // Per-function settings and queries.
  CU_OK(cuFuncSetAttribute(vadd, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  CU_OK(cuLaunchKernel(vadd, 1, 1, 1, 64, 1, 1, 64 * 1024, stream, args, nullptr));
  CU_OK(cuFuncSetCacheConfig(vadd, CU_FUNC_CACHE_PREFER_SHARED));
  int blocks = 0;
  CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vadd, 256, 0));
  CHECK(blocks > 0);

  // Context-wide settings.
  size_t heap = 0;
  CU_OK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 16 << 20));
  CU_OK(cuCtxGetLimit(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
  CHECK(heap == 16 << 20);
  CUfunc_cache cache;
  CU_OK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
  CU_OK(cuCtxGetCacheConfig(&cache));
  CHECK(cache == CU_FUNC_CACHE_PREFER_L1);
  int least = 0, greatest = 0;
  CU_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
  CHECK(greatest <= least);

  // Unified copies, address ranges, registered host memory.
  CU_OK(cuMemcpy(dc, reinterpret_cast<CUdeviceptr>(a.data()), n * sizeof(float)));
  CU_OK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(c.data()), dc, n * sizeof(float), stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(c == a);
  CUdeviceptr base = 0;
  size_t range = 0;
  CU_OK(cuMemGetAddressRange(&base, &range, dc + 100));
  CHECK(base == dc && range == n * sizeof(float));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &range, 16));
  std::vector<float> registered(n, 0.f);
  CU_OK(cuMemHostRegister(registered.data(), n * sizeof(float), 0));
  CU_OK(cuMemcpyDtoH(registered.data(), dc, n * sizeof(float)));
  CHECK(registered == a);
  CU_OK(cuMemHostUnregister(registered.data()));

  // Copies and memsets, whose results the test backend does compute.
  CUevent start, stop;
  CU_OK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_OK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CU_OK(cuEventRecord(start, stream));
  CU_OK(cuMemcpyDtoDAsync(dc, da, n * sizeof(float), stream));
  CU_OK(cuMemcpyDtoHAsync(c.data(), dc, n * sizeof(float), stream));
  CU_OK(cuEventRecord(stop, stream));
  CU_OK(cuStreamSynchronize(stream));
  CU_OK(cuEventSynchronize(stop));
  CU_OK(cuEventQuery(stop));
  CU_OK(cuStreamQuery(stream));
  float ms = -1;
  CU_OK(cuEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0);
  CHECK(std::memcmp(c.data(), a.data(), n * sizeof(float)) == 0);

  std::vector<uint32_t> words(n);
  CU_OK(cuMemsetD32(dc, 0x12345678u, n));
  CU_OK(cuMemcpyDtoH(words.data(), dc, n * sizeof(uint32_t)));
  CHECK(words[0] == 0x12345678u && words[n - 1] == 0x12345678u);
  std::vector<uint16_t> halves(2 * n);
  CU_OK(cuMemsetD16Async(dc, 0xabcd, 2 * n, stream));
  CU_OK(cuMemcpyDtoHAsync(halves.data(), dc, 2 * n * sizeof(uint16_t), stream));
  CU_OK(cuStreamSynchronize(stream));
  CHECK(halves[0] == 0xabcd && halves[2 * n - 1] == 0xabcd);
  std::vector<uint8_t> bytes(n);
  CU_OK(cuMemsetD8(dc, 7, n));
  CU_OK(cuMemcpyDtoH(bytes.data(), dc, n));
  CHECK(bytes[0] == 7 && bytes[n - 1] == 7);

  size_t free_mem = 0, total_mem = 0;
  CU_OK(cuMemGetInfo(&free_mem, &total_mem));
  CHECK(total_mem > 0 && free_mem <= total_mem);
  void* pinned = nullptr;
  CU_OK(cuMemAllocHost(&pinned, 4096));
  CU_OK(cuMemcpyDtoH(pinned, dc, 1000));
  CHECK(static_cast<uint8_t*>(pinned)[999] == 7);
  CU_OK(cuMemFreeHost(pinned));

  // cuGetProcAddress gives the versions cuda.h binds the names to.
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  CU_OK(cuGetProcAddress("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CUdeviceptr extra_alloc = 0;
  CU_OK(reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(fn)(&extra_alloc, 256));
  CU_OK(cuMemFree(extra_alloc));
  CU_OK(cuGetProcAddress("cuMemcpyHtoDAsync", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "cuMemcpyHtoDAsync_v2_ptsz"));
  CU_OK(cuGetProcAddress("cuInit", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(fn == reinterpret_cast<void*>(&cuInit));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuGetProcAddress("cuNoSuchFunction", &fn, 13000, 0, &status));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuGetProcAddress("cudaMalloc", &fn, 13000, 0, &status));
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);

  CU_OK(cuEventDestroy(start));
  CU_OK(cuEventDestroy(stop));
  CU_OK(cuStreamDestroy(stream));
  CU_OK(cuMemFree(da));
  CU_OK(cuMemFree(db));
  CU_OK(cuMemFree(dc));
  CU_OK(cuModuleUnload(from_file));
  CU_OK(cuModuleUnload(from_data));
  CU_OK(cuModuleUnload(from_cubin));
  CU_OK(cuModuleUnload(from_fatbin));
  CU_OK(cuCtxDestroy(ctx));
  return finish();
}
