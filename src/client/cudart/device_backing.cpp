#include "client/cudart/device_backing.hpp"

#include <cuda.h>

#include <vector>

#include "client/core/runtime.hpp"
#include "common/log.hpp"

namespace rgpu::client::device_backing {
namespace {

// The devices of `device`'s server, `device` first.
std::vector<int> server_devices(int device) {
  Runtime& rt = Runtime::get();
  std::vector<int> devices{device};
  for (int i = 0; i < rt.device_count(); ++i)
    if (i != device && same_server(i, device)) devices.push_back(i);
  return devices;
}

// Read-write access for `devices` to [address, address + size).
CUresult grant(CUdeviceptr address, size_t size, const std::vector<int>& devices) {
  std::vector<CUmemAccessDesc> access(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    access[i].location = {CU_MEM_LOCATION_TYPE_DEVICE, devices[i]};
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  return cuMemSetAccess(address, size, access.data(), access.size());
}

// A failed driver call of the mapping, logged: the allocation fails.
cudaError_t failed(const char* what, CUresult e) {
  RGPU_LOG(warn, "device memory for coherent page-locked memory: %s failed (%d)", what, static_cast<int>(e));
  return cudaErrorMemoryAllocation;
}

cudaError_t map_for(const std::vector<int>& devices, size_t bytes, Allocation* out) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, devices[0]};
  size_t granularity = 0;
  if (CUresult e = cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM))
    return failed("cuMemGetAllocationGranularity", e);
  const size_t size = (bytes + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle handle;
  if (CUresult e = cuMemCreate(&handle, size, &prop, 0)) return failed("cuMemCreate", e);
  CUdeviceptr address = 0;
  CUresult e = cuMemAddressReserve(&address, size, 0, 0, 0);
  if (e == CUDA_SUCCESS && (e = cuMemMap(address, size, 0, handle, 0)) != CUDA_SUCCESS)
    cuMemAddressFree(address, size);
  cuMemRelease(handle);  // the mapping holds it
  if (e) return failed("cuMemAddressReserve or cuMemMap", e);
  *out = {address, size, true};
  if (grant(address, size, devices) == CUDA_SUCCESS) return cudaSuccess;
  // GPUs without peer access to this one cannot be granted it.
  for (size_t i = 1; i < devices.size(); ++i)
    if (grant(address, size, {devices[0], devices[i]}) != CUDA_SUCCESS)
      RGPU_LOG(warn, "device %d cannot reach device %d's memory: page-locked memory standing in there is out of its "
               "kernels' reach", devices[i], devices[0]);
  if (grant(address, size, {devices[0]}) == CUDA_SUCCESS) return cudaSuccess;
  release(*out);
  return cudaErrorMemoryAllocation;
}

}  // namespace

cudaError_t allocate(size_t bytes, bool server_wide, Allocation* out) {
  if (server_wide) {
    auto devices = server_devices(Runtime::current_device());
    if (devices.size() > 1) return map_for(devices, bytes, out);
  }
  void* memory = nullptr;
  if (cudaError_t e = cudaMalloc(&memory, bytes)) return e;
  *out = {reinterpret_cast<uint64_t>(memory), bytes, false};
  return cudaSuccess;
}

cudaError_t release(const Allocation& a) {
  if (!a.mapped) return cudaFree(reinterpret_cast<void*>(a.address));
  CUresult unmapped = cuMemUnmap(a.address, a.size);
  CUresult freed = cuMemAddressFree(a.address, a.size);
  return unmapped == CUDA_SUCCESS && freed == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace rgpu::client::device_backing
