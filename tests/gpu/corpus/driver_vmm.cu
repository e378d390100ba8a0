// Driver API virtual memory management: two physical allocations mapped
// side by side into one reserved range, made accessible, used by a kernel
// as one array, copied back, then unmapped and released.
#include <vector>

#include "driver_corpus.h"

__global__ void fill(unsigned* d, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) d[i] = static_cast<unsigned>(i * 2654435761u);
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
  size_t g = 0;
  CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  printf("granularity is a multiple of 64 KiB: %s\n", g % (64 << 10) == 0 ? "yes" : "no");
  const size_t part = 4 * g;
  CUmemGenericAllocationHandle h[2];
  CU(cuMemCreate(&h[0], part, &prop, 0));
  CU(cuMemCreate(&h[1], part, &prop, 0));
  CUdeviceptr base;
  CU(cuMemAddressReserve(&base, 2 * part, 0, 0, 0));
  CU(cuMemMap(base, part, 0, h[0], 0));
  CU(cuMemMap(base + part, part, 0, h[1], 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU(cuMemSetAccess(base, 2 * part, &access, 1));
  unsigned long long flags = 0;
  CU(cuMemGetAccess(&flags, &prop.location, base + part));
  printf("access read-write: %s\n", flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "yes" : "no");

  const size_t n = 2 * part / sizeof(unsigned);
  fill<<<static_cast<unsigned>((n + 255) / 256), 256>>>(reinterpret_cast<unsigned*>(base), n);
  CK(cudaGetLastError());
  CU(cuCtxSynchronize());
  std::vector<unsigned> back(n);
  CU(cuMemcpyDtoH(back.data(), base, 2 * part));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != static_cast<unsigned>(i * 2654435761u);
  EXPECT(bad == 0, "%zu wrong", bad);
  printf("kernel across two mapped allocations: mismatches=%zu checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(back.data(), 2 * part));

  CUmemGenericAllocationHandle retained;
  CU(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(base + part + 8)));
  printf("retained handle is the second allocation: %s\n", retained == h[1] ? "yes" : "no");
  CU(cuMemRelease(retained));
  CU(cuMemUnmap(base, 2 * part));
  CU(cuMemAddressFree(base, 2 * part));
  CU(cuMemRelease(h[0]));
  CU(cuMemRelease(h[1]));
  CU(cuDevicePrimaryCtxRelease(dev));
  return finish();
}
