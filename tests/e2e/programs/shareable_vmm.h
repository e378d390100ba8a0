// Allocations of device 0 that may be exported as POSIX descriptors, and
// mapping a whole one read and write and taking the mapping down again
// (the shareable handle tests' exporters and importers).
#pragma once
#include "driver_check.h"

static CUmemAllocationProp shareable_prop() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

static size_t granularity() {
  CUmemAllocationProp prop = shareable_prop();
  size_t g = 0;
  CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return g;
}

// Reserves, maps and opens `size` bytes of `h` for device 0.
static CUdeviceptr map_whole(CUmemGenericAllocationHandle h, size_t size) {
  CUdeviceptr base = 0;
  CU_OK(cuMemAddressReserve(&base, size, 0, 0, 0));
  CU_OK(cuMemMap(base, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_OK(cuMemSetAccess(base, size, &access, 1));
  return base;
}

static void unmap_whole(CUdeviceptr base, size_t size) {
  CU_OK(cuMemUnmap(base, size));
  CU_OK(cuMemAddressFree(base, size));
}
