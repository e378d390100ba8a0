// Driver and runtime API in one program: both see one client. Runtime
// allocations are used by driver copies and launches, driver allocations by
// runtime copies, streams cross over, and the current context follows
// cudaSetDevice.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "driver_check.h"

int main() {
  OK(cudaSetDevice(0));
  CUcontext ctx = nullptr;
  CU_OK(cuCtxGetCurrent(&ctx));  // no cuInit: the runtime initialised the driver
  CHECK(ctx != nullptr);
  CUdevice dev = -1;
  CU_OK(cuCtxGetDevice(&dev));
  CHECK(dev == 0);
  CUcontext primary;
  CU_OK(cuDevicePrimaryCtxRetain(&primary, 0));
  CHECK(primary == ctx);
  unsigned flags = 0;
  int active = 0;
  CU_OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
  CHECK(active == 1);

  const int n = 512;
  std::vector<int> host(n), back(n, 0);
  for (int i = 0; i < n; ++i) host[i] = i * 3;
  int* rt_ptr = nullptr;
  OK(cudaMalloc(&rt_ptr, n * sizeof(int)));
  CU_OK(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(rt_ptr), host.data(), n * sizeof(int)));
  OK(cudaMemcpy(back.data(), rt_ptr, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(back == host);

  // What the driver knows of runtime allocations.
  CUmemorytype type;
  CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(rt_ptr + 5)));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CUcontext owner = nullptr;
  CU_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(rt_ptr)));
  CHECK(owner == ctx);
  CUdeviceptr start = 0;
  size_t bytes = 0;
  CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, reinterpret_cast<CUdeviceptr>(rt_ptr + 5)));
  CU_OK(cuPointerGetAttribute(&bytes, CU_POINTER_ATTRIBUTE_RANGE_SIZE, reinterpret_cast<CUdeviceptr>(rt_ptr + 5)));
  CHECK(start == reinterpret_cast<CUdeviceptr>(rt_ptr) && bytes == n * sizeof(int));
  int* pinned = nullptr;
  OK(cudaMallocHost(&pinned, 256));
  CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(pinned)));
  CHECK(type == CU_MEMORYTYPE_HOST);
  OK(cudaFreeHost(pinned));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(&type)));

  CUdeviceptr cu_ptr;
  CU_OK(cuMemAlloc(&cu_ptr, n * sizeof(int)));
  OK(cudaMemcpy(reinterpret_cast<void*>(cu_ptr), rt_ptr, n * sizeof(int), cudaMemcpyDeviceToDevice));
  std::fill(back.begin(), back.end(), 0);
  CU_OK(cuMemcpyDtoH(back.data(), cu_ptr, n * sizeof(int)));
  CHECK(back == host);

  std::ifstream in(RGPU_PTX_FILE);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CUmodule module;
  CU_OK(cuModuleLoadDataEx(&module, ptx.c_str(), 0, nullptr, nullptr));
  CUfunction vadd;
  // A driver error is the driver call's own: cudaGetLastError does not see it.
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&vadd, module, "no_such_kernel"));
  OK(cudaGetLastError());
  CU_OK(cuModuleGetFunction(&vadd, module, "vadd"));
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  void* args[] = {&rt_ptr, &rt_ptr, &cu_ptr, const_cast<int*>(&n)};
  CU_OK(cuLaunchKernel(vadd, 2, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr));
  OK(cudaStreamSynchronize(stream));
  OK(cudaGetLastError());

  cudaEvent_t event;
  OK(cudaEventCreate(&event));
  CU_OK(cuEventRecord(reinterpret_cast<CUevent>(event), reinterpret_cast<CUstream>(stream)));
  OK(cudaEventSynchronize(event));

  // The runtime hands out the driver's entry points.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult status;
  OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &entry, 13000, cudaEnableDefault, &status));
  CHECK(status == cudaDriverEntryPointSuccess && entry != nullptr);
  CUdeviceptr via_entry = 0;
  CU_OK(reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(entry)(&via_entry, 64));
  CU_OK(cuMemFree(via_entry));
  OK(cudaGetDriverEntryPointByVersion("cuNoSuchCall", &entry, 13000, cudaEnableDefault, &status));
  CHECK(status == cudaDriverEntryPointSymbolNotFound && entry == nullptr);

  CU_OK(cuModuleUnload(module));
  OK(cudaEventDestroy(event));
  CU_OK(cuStreamDestroy(reinterpret_cast<CUstream>(stream)));
  CU_OK(cuMemFree(reinterpret_cast<CUdeviceptr>(rt_ptr)));
  OK(cudaFree(reinterpret_cast<void*>(cu_ptr)));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  return finish();
}
