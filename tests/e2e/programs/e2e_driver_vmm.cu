// Driver API virtual memory management: granularity, physical allocations,
// a reservation holding two of them side by side, access, copies and
// memsets through the mapped addresses, unmapping, and the errors of bad
// handles and ranges.
#include <cstring>
#include <vector>

#include "driver_check.h"

int main() {
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t g = 0;
  CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CHECK(g > 0);
  CUmemAllocationProp bad = prop;
  bad.location.id = 12;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuMemGetAllocationGranularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));

  CUmemGenericAllocationHandle h1 = 0, h2 = 0;
  CU_OK(cuMemCreate(&h1, g, &prop, 0));
  CU_OK(cuMemCreate(&h2, 2 * g, &prop, 0));
  CUmemAllocationProp got{};
  CU_OK(cuMemGetAllocationPropertiesFromHandle(&got, h2));
  CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.id == 0);

  CUdeviceptr base = 0;
  CU_OK(cuMemAddressReserve(&base, 4 * g, 0, 0, 0));
  CHECK(base != 0 && base % g == 0);
  // h1 at the start, the second half of h2 right after it.
  CU_OK(cuMemMap(base, g, 0, h1, 0));
  CU_OK(cuMemMap(base + g, g, g, h2, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base, g, 0, h2, 0));          // overlaps a mapping
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base + 3 * g, 2 * g, 0, h2, 0));  // past the reservation
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base + 2 * g, 2 * g, g, h2, 0));  // past the allocation
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuMemMap(base + 2 * g, g, 0, 987654, 0));

  // Not yet accessible: not memory copies may touch.
  std::vector<unsigned char> data(g), back(g);
  for (size_t i = 0; i < g; ++i) data[i] = static_cast<unsigned char>(i * 13 + 7);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(base, data.data(), g));

  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_OK(cuMemSetAccess(base, g, &access, 1));
  CU_OK(cuMemSetAccess(base, 2 * g, &access, 1));  // merges with the first
  CU_OK(cuMemSetAccess(base + g, g, &access, 1));  // within it, then touching it once unmapped below
  unsigned long long flags = 0;
  CU_OK(cuMemGetAccess(&flags, &prop.location, base + g));
  CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(base, 3 * g, &access, 1));  // a hole in the range

  CU_OK(cuMemcpyHtoD(base, data.data(), g));
  CU_OK(cuMemcpyDtoD(base + g, base, g));
  CU_OK(cuMemsetD8(base + g, 0x5c, 100));
  CU_OK(cuMemcpyDtoH(back.data(), base + g, g));
  CHECK(back[0] == 0x5c && back[99] == 0x5c && std::memcmp(back.data() + 100, data.data() + 100, g - 100) == 0);
  // One copy across both mappings.
  std::vector<unsigned char> both(2 * g);
  CU_OK(cuMemcpyDtoH(both.data(), base, 2 * g));
  CHECK(std::memcmp(both.data(), data.data(), g) == 0 && both[g] == 0x5c);

  // The handle of a mapped address, retained and released again.
  CUmemGenericAllocationHandle retained = 0;
  CU_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(base + g + 5)));
  CHECK(retained == h2);
  CU_OK(cuMemRelease(retained));

  // Released while mapped: the mapping keeps the memory.
  CU_OK(cuMemRelease(h2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(h2));
  CU_OK(cuMemcpyDtoH(back.data(), base + g, 100));
  CHECK(back[0] == 0x5c);

  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(base, 4 * g));  // still mapped
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemUnmap(base, g / 2));        // cuts a mapping
  // Unmapping one chunk leaves the other accessible.
  CU_OK(cuMemUnmap(base, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(back.data(), base, 16));
  CU_OK(cuMemcpyDtoH(back.data(), base + g, 100));
  CHECK(back[0] == 0x5c);
  // Chunks mapped back to back and made accessible one by one (as XLA's
  // allocator does) take one copy or memset across both.
  CU_OK(cuMemMap(base, g, 0, h1, 0));
  CU_OK(cuMemSetAccess(base, g, &access, 1));
  CU_OK(cuMemsetD8(base + g - 50, 0x3e, 100));
  CU_OK(cuMemcpyDtoH(back.data(), base + g - 50, 100));
  CHECK(back[0] == 0x3e && back[99] == 0x3e);
  CU_OK(cuMemUnmap(base, 2 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(back.data(), base, 16));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(back.data(), base + g, 16));
  CU_OK(cuMemAddressFree(base, 4 * g));
  CU_OK(cuMemRelease(h1));
  CU_OK(cuDevicePrimaryCtxRelease(0));
  return finish();
}
