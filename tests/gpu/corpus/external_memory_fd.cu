// External memory from a file descriptor CUDA itself exports (no Vulkan on
// the GPU machine): a cuMemCreate allocation made exportable as a POSIX
// descriptor, exported with cuMemExportToShareableHandle, imported back with
// cudaImportExternalMemory (OpaqueFd) and with cuImportExternalMemory, a
// buffer mapped from each, data checked both ways. Each step prints its
// status name, so a driver refusing the combination gives the same output
// locally and through rgpu; later steps of a refused one are skipped.
// External semaphores are not tried: CUDA cannot create an exportable one
// (they come from Vulkan, Direct3D or NvSciSync).
#include <unistd.h>

#include <vector>

#include "driver_corpus.h"

__global__ void fill(unsigned* d, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) d[i] = static_cast<unsigned>(i * 2654435761u);
}

__global__ void add_one(unsigned* d, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) d[i] += 1;
}

static unsigned blocks(size_t n) { return static_cast<unsigned>((n + 255) / 256); }

// The words at `p` are fill()'s plus `plus`.
static size_t mismatches(CUdeviceptr p, size_t n, unsigned plus) {
  std::vector<unsigned> back(n);
  CU(cuMemcpyDtoH(back.data(), p, n * sizeof(unsigned)));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != static_cast<unsigned>(i * 2654435761u) + plus;
  return bad;
}

// Imports an exported descriptor through one API, maps the whole allocation
// as a buffer, reads it, writes through it and reads the write back through
// the original mapping at va.
static void import_and_check(const char* api, bool runtime, int fd, size_t size, CUdeviceptr va, unsigned* plus) {
  CUdeviceptr buffer = 0;
  cudaExternalMemory_t rt_mem = nullptr;
  CUexternalMemory cu_mem = nullptr;
  const char* imported;
  const char* mapped;
  if (runtime) {
    cudaExternalMemoryHandleDesc d{};
    d.type = cudaExternalMemoryHandleTypeOpaqueFd;
    d.handle.fd = fd;
    d.size = size;
    cudaError_t e = cudaImportExternalMemory(&rt_mem, &d);
    imported = cudaGetErrorName(e);
    if (e != cudaSuccess) close(fd);  // still ours
    cudaExternalMemoryBufferDesc b{};
    b.size = size;
    void* p = nullptr;
    mapped = e == cudaSuccess ? cudaGetErrorName(cudaExternalMemoryGetMappedBuffer(&p, rt_mem, &b)) : "skipped";
    buffer = reinterpret_cast<CUdeviceptr>(p);
  } else {
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
    d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    d.handle.fd = fd;
    d.size = size;
    CUresult r = cuImportExternalMemory(&cu_mem, &d);
    imported = cu_error_name(r);
    if (r != CUDA_SUCCESS) close(fd);
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
    b.size = size;
    mapped = r == CUDA_SUCCESS ? cu_error_name(cuExternalMemoryGetMappedBuffer(&buffer, cu_mem, &b)) : "skipped";
  }
  printf("%s import: %s\n", api, imported);
  printf("%s mapped buffer: %s\n", api, mapped);
  if (buffer) {
    const size_t n = size / sizeof(unsigned);
    size_t bad = mismatches(buffer, n, *plus);
    EXPECT(bad == 0, "%zu wrong through the buffer", bad);
    printf("%s buffer reads the allocation: mismatches=%zu\n", api, bad);
    add_one<<<blocks(n), 256>>>(reinterpret_cast<unsigned*>(buffer), n);
    CK(cudaGetLastError());
    CU(cuCtxSynchronize());
    ++*plus;
    bad = mismatches(va, n, *plus);
    EXPECT(bad == 0, "%zu wrong through the allocation", bad);
    printf("%s writes through the buffer reach the allocation: mismatches=%zu\n", api, bad);
    CU(cuMemFree(buffer));
  }
  if (rt_mem) CK(cudaDestroyExternalMemory(rt_mem));
  if (cu_mem) CU(cuDestroyExternalMemory(cu_mem));
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t size = 0;
  CU(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle h;
  CU(cuMemCreate(&h, size, &prop, 0));
  CUdeviceptr va;
  CU(cuMemAddressReserve(&va, size, 0, 0, 0));
  CU(cuMemMap(va, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU(cuMemSetAccess(va, size, &access, 1));
  const size_t n = size / sizeof(unsigned);
  fill<<<blocks(n), 256>>>(reinterpret_cast<unsigned*>(va), n);
  CK(cudaGetLastError());
  CU(cuCtxSynchronize());

  unsigned plus = 0;
  for (int api = 0; api < 2; ++api) {
    int fd = -1;
    CUresult r = cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    const char* name = api == 0 ? "runtime" : "driver";
    printf("%s export as a file descriptor: %s\n", name, cu_error_name(r));
    if (r == CUDA_SUCCESS) import_and_check(name, api == 0, fd, size, va, &plus);
  }

  CU(cuMemUnmap(va, size));
  CU(cuMemAddressFree(va, size));
  CU(cuMemRelease(h));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
