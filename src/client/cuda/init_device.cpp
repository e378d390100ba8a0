// cuInit and the device queries: the driver's devices are the runtime's
// remote GPUs (RGPU_DEVICES), with the properties read once from the server.
#include "client/cuda/cuda_api.hpp"
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <tuple>

#include "client/core/api_guard.hpp"
#include "client/core/async_notifications.hpp"
#include "client/core/runtime.hpp"
#include "client/cuda/driver_errors.hpp"

using namespace rgpu::client;

namespace {

// domain:bus:device.function, or bus:device.function in domain 0 (hex).
bool parse_pci_bus_id(const char* id, std::tuple<unsigned, unsigned, unsigned, unsigned>* out) {
  unsigned domain = 0, bus, device, function;
  char end;
  if (std::sscanf(id, "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &end) == 4 ||
      (domain = 0, std::sscanf(id, "%x:%x.%x%c", &bus, &device, &function, &end) == 3)) {
    *out = {domain, bus, device, function};
    return true;
  }
  return false;
}

CUresult device_properties(CUdevice dev, const cudaDeviceProp** out) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  Runtime& rt = Runtime::get();
  if (dev < 0 || dev >= rt.device_count()) return CUDA_ERROR_INVALID_DEVICE;
  return to_cu(rt.properties(dev, out));
}

}  // namespace

extern "C" CUresult CUDAAPI cuInit(unsigned int Flags) {
  KeepLastError keep;
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult e = to_cu(Runtime::get().ensure_init())) return e;
  set_driver_initialized();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  KeepLastError keep;
  return to_cu(cudaDriverGetVersion(driverVersion));
}

extern "C" CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  *count = Runtime::get().device_count();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= Runtime::get().device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  size_t n = strnlen(p->name, sizeof p->name);
  n = n < static_cast<size_t>(len) ? n : static_cast<size_t>(len) - 1;
  std::memcpy(name, p->name, n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

// CUdevice_attribute and cudaDeviceAttr number every attribute alike.
extern "C" CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  KeepLastError keep;
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  return to_cu(cudaDeviceGetAttribute(pi, static_cast<cudaDeviceAttr>(attrib), dev));
}

extern "C" CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  *bytes = p->totalGlobalMem;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  static_assert(sizeof(CUuuid) == sizeof(p->uuid));
  std::memcpy(uuid, &p->uuid, sizeof(CUuuid));
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

extern "C" CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  *major = p->major;
  *minor = p->minor;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  KeepLastError keep;
  const cudaDeviceProp* p;
  if (CUresult e = device_properties(dev, &p)) return e;
  return to_cu(cudaDeviceGetPCIBusId(pciBusId, len, dev));
}

extern "C" CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  std::tuple<unsigned, unsigned, unsigned, unsigned> wanted, id;
  if (!parse_pci_bus_id(pciBusId, &wanted)) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < Runtime::get().device_count(); ++i) {
    char name[32];
    if (CUresult e = cuDeviceGetPCIBusId(name, sizeof name, i)) return e;
    if (parse_pci_bus_id(name, &id) && id == wanted) {
      *dev = i;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}

// Notification information, callbacks and handles are the runtime's under other names.
static_assert(sizeof(CUasyncNotificationInfo) == sizeof(cudaAsyncNotificationInfo_t));

extern "C" CUresult CUDAAPI cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc,
                                                              void* userData, CUasyncCallbackHandle* callback) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(api([&] {
    return register_async_notification(device, reinterpret_cast<cudaAsyncCallback>(callbackFunc), userData,
                                       reinterpret_cast<cudaAsyncCallbackHandle_t*>(callback));
  }));
}

extern "C" CUresult CUDAAPI cuDeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback) {
  if (!driver_initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  return to_cu(api(
      [&] { return unregister_async_notification(device, reinterpret_cast<cudaAsyncCallbackHandle_t>(callback)); }));
}
