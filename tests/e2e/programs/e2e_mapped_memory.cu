// Zero-copy mapped host memory. Over shm it is real: the device address of
// cudaHostAlloc memory reaches the application's pages (device writes are
// seen by the host, host writes by the device). Over tcp the GPU cannot
// reach client memory: memory allocated mapped is device memory at the host
// address, coherent in software at every call (the device pointer is the
// host pointer); other page-locked memory becomes such memory (at another
// address) when a kernel is handed it or its device pointer is asked for.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void touch(int* p) { *p = 1; }

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  // RGPU_PAGE_LOCKED_MAPPED=1: over tcp every page-locked allocation is mapped.
  const char* all = std::getenv("RGPU_PAGE_LOCKED_MAPPED");
  bool all_mapped = all && std::strcmp(all, "1") == 0;
  const size_t n = (3 << 20) + 4096;  // over tcp: four 1 MiB chunks, the last a page

  // What the GPU can do with this process's memory is rgpu's answer (the
  // test backend reports a GPU on a host with HMM), the same through
  // properties, runtime and driver attributes.
  cudaDeviceProp prop;
  OK(cudaGetDeviceProperties(&prop, 0));
  int pageable = -1, map = -1, managed = -1, concurrent = -1;
  OK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
  OK(cudaDeviceGetAttribute(&map, cudaDevAttrCanMapHostMemory, 0));
  OK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
  OK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
  CHECK(pageable == 0 && prop.pageableMemoryAccess == 0);
  CHECK(map == 1 && prop.canMapHostMemory == map);
  CHECK(managed == 1 && prop.managedMemory == managed);
  CHECK(concurrent == shm && prop.concurrentManagedAccess == concurrent);

  // Flags are reported for any page-locked memory.
  void* plain = nullptr;
  OK(cudaHostAlloc(&plain, n, cudaHostAllocPortable));
  unsigned flags = 99;
  OK(cudaHostGetFlags(&flags, plain));
  CHECK(flags == cudaHostAllocPortable);
  std::vector<unsigned char> local(64);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaHostGetFlags(&flags, local.data()));
  void* dev = nullptr;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaHostGetDevicePointer(&dev, local.data(), 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaHostGetDevicePointer(&dev, plain, 1));
  // Memory the application allocated itself and registered has a device
  // address only over shm (e2e_registered_memory.cu): elsewhere a kernel
  // handed it, which the GPU cannot reach, is refused (it would end the
  // context with an illegal address).
  OK(cudaHostRegister(local.data(), local.size(), cudaHostRegisterMapped));
  EXPECT_STATUS(shm ? cudaSuccess : cudaErrorNotSupported, cudaHostGetDevicePointer(&dev, local.data(), 0));
  cudaGetLastError();  // the refused calls' above
  touch<<<1, 1>>>(reinterpret_cast<int*>(local.data()));
  EXPECT_STATUS(shm ? cudaSuccess : cudaErrorNotSupported, cudaGetLastError());
  OK(cudaHostUnregister(local.data()));

  unsigned char* host = nullptr;
  if (!shm) {
    // As under unified addressing: a kernel may be handed it unmapped. Over
    // tcp that makes it device memory kept coherent (promoted: its device
    // pointer is no longer its host pointer), unless RGPU_PAGE_LOCKED_MAPPED
    // made it so at allocation.
    touch<<<1, 1>>>(static_cast<int*>(plain));
    OK(cudaGetLastError());
    OK(cudaHostGetDevicePointer(&dev, plain, 0));
    CHECK(all_mapped ? dev == plain : dev != nullptr && dev != plain);
    std::memset(plain, 0x42, n);
    OK(cudaMemset(static_cast<char*>(plain) + 10, 0x43, 5));
    OK(cudaMemset(static_cast<char*>(dev) + 20, 0x44, 1));
    OK(cudaDeviceSynchronize());
    const auto* bytes = static_cast<const unsigned char*>(plain);
    CHECK(bytes[9] == 0x42 && bytes[10] == 0x43 && bytes[14] == 0x43 && bytes[15] == 0x42 && bytes[20] == 0x44 &&
          bytes[n - 1] == 0x42);
  }

  OK(cudaHostAlloc(reinterpret_cast<void**>(&host), n, cudaHostAllocMapped));
  OK(cudaHostGetFlags(&flags, host));
  CHECK(flags == cudaHostAllocMapped);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 13 + 1);
  unsigned char* mapped = nullptr;
  OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), host, 0));
  CHECK(mapped != nullptr);
  if (!shm) CHECK(mapped == host);
  unsigned char* inner = nullptr;
  OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&inner), host + 1000, 0));
  CHECK(inner == mapped + 1000);
  // A kernel may be handed it (here launches are checked, not run).
  cudaGetLastError();
  touch<<<1, 1>>>(reinterpret_cast<int*>(mapped));
  OK(cudaGetLastError());
  OK(cudaDeviceSynchronize());
  // Pointer attributes give both sides of the mapping.
  cudaPointerAttributes attrs;
  OK(cudaPointerGetAttributes(&attrs, host + 8));
  CHECK(attrs.type == cudaMemoryTypeHost && attrs.devicePointer == mapped + 8 && attrs.hostPointer == host + 8);
  OK(cudaPointerGetAttributes(&attrs, mapped + 8));
  CHECK(attrs.type == cudaMemoryTypeHost && attrs.devicePointer == mapped + 8 && attrs.hostPointer == host + 8);

  // The device reads the host's data in place...
  void* buffer = nullptr;
  OK(cudaMalloc(&buffer, n));
  OK(cudaMemcpy(buffer, mapped, n, cudaMemcpyDeviceToDevice));
  std::vector<unsigned char> back(n);
  OK(cudaMemcpy(back.data(), buffer, n, cudaMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), host, n) == 0);
  // ...and its writes land in the host's pages.
  OK(cudaMemset(mapped + 4096, 0x5a, 8192));
  OK(cudaMemsetAsync(buffer, 0x33, 100));
  OK(cudaMemcpyAsync(mapped, buffer, 100, cudaMemcpyDeviceToDevice));
  OK(cudaDeviceSynchronize());
  CHECK(host[0] == 0x33 && host[99] == 0x33 && host[100] == static_cast<unsigned char>(100 * 13 + 1));
  CHECK(host[4096] == 0x5a && host[4096 + 8191] == 0x5a && host[4096 + 8192] != 0x5a);
  // The mapping ends where the allocation does.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(mapped + n - 10, 0, 11));
  // The host's writes after the device's reach the device at the next call,
  // on both sides of a chunk boundary.
  host[(1 << 20) - 1] = 0x77;
  host[1 << 20] = 0x79;
  host[n - 1] = 0x7a;
  OK(cudaMemcpy(back.data(), mapped, n, cudaMemcpyDefault));
  CHECK(back[0] == 0x33 && back[4096] == 0x5a && back[(1 << 20) - 1] == 0x77 && back[1 << 20] == 0x79 &&
        back[n - 1] == 0x7a);
  // Its device memory is the host memory's: cudaFreeHost frees it, cudaFree does not.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(host));
  // Plain page-locked memory from cudaHostAlloc is mapped too (as with
  // unified addressing).
  OK(cudaHostGetDevicePointer(&dev, plain, 0));
  CHECK(dev != nullptr);

  OK(cudaFreeHost(host));
  // Freed host memory has no device address any more.
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(mapped, 0, 16));
  OK(cudaFreeHost(plain));
  OK(cudaFree(buffer));
  return finish();
}
