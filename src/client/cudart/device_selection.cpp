// Choosing a device by what it is: by properties (cudaChooseDevice) or by
// PCI bus id (cudaDeviceGetByPCIBusId), over the properties and bus ids the
// servers report for the application's devices; and the list of devices a
// thread that chose none may use (cudaSetValidDevices).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <tuple>

#include "client/core/api_guard.hpp"
#include "client/core/runtime.hpp"

using namespace rgpu::client;

namespace {

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const PciAddress&) const = default;
};

// "domain:bus:device.function" or "bus:device.function", in hex.
bool parse_pci(const char* text, PciAddress* a) {
  int end = -1;
  if (std::sscanf(text, "%x:%x:%x.%x%n", &a->domain, &a->bus, &a->device, &a->function, &end) == 4 &&
      text[end] == '\0')
    return true;
  *a = PciAddress{};
  end = -1;
  return std::sscanf(text, "%x:%x.%x%n", &a->bus, &a->device, &a->function, &end) == 3 && text[end] == '\0';
}

}  // namespace

// The device that best meets *prop, ranked by: compute capability at least
// the one asked, memory at least the amount asked, exactly that capability,
// most multiprocessors; a field left zero asks nothing, ties go to the
// lowest ordinal. (NVIDIA documents no ranking of its own.)
extern "C" cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  return api([&]() -> cudaError_t {
    if (!device || !prop) return cudaErrorInvalidValue;
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    int best = -1;
    std::tuple<bool, bool, int, int> best_score;
    for (int i = 0; i < rt.device_count(); ++i) {
      const cudaDeviceProp* p;
      if (cudaError_t e = rt.properties(i, &p)) return e;
      std::tuple<bool, bool, int, int> score{
          std::tie(p->major, p->minor) >= std::tie(prop->major, prop->minor),
          p->totalGlobalMem >= prop->totalGlobalMem, p->major == prop->major && p->minor == prop->minor,
          p->multiProcessorCount};
      if (best < 0 || score > best_score) {
        best = i;
        best_score = score;
      }
    }
    if (best < 0) return cudaErrorNoDevice;
    *device = best;
    return cudaSuccess;
  });
}

// Every device works once its server is connected, so CUDA's "first device
// of the list that works" is the list's first: it becomes the device of the
// threads that never chose one. An empty list restores device 0.
extern "C" cudaError_t cudaSetValidDevices(int* device_arr, int len) {
  return api([&]() -> cudaError_t {
    if (len < 0 || (len > 0 && !device_arr)) return cudaErrorInvalidValue;
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    if (len > rt.device_count()) return cudaErrorInvalidValue;
    for (int i = 0; i < len; ++i)
      if (!rt.device(device_arr[i])) return cudaErrorInvalidDevice;
    Runtime::set_implicit_device(len ? device_arr[0] : 0);
    return cudaSuccess;
  });
}

// Two servers' GPUs may sit at the same bus address: the first device wins.
extern "C" cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return api([&]() -> cudaError_t {
    if (!device || !pciBusId) return cudaErrorInvalidValue;
    PciAddress wanted;
    if (!parse_pci(pciBusId, &wanted)) return cudaErrorInvalidValue;
    Runtime& rt = Runtime::get();
    if (cudaError_t e = rt.ensure_init()) return e;
    for (int i = 0; i < rt.device_count(); ++i) {
      const cudaDeviceProp* p;
      if (cudaError_t e = rt.properties(i, &p)) return e;
      PciAddress a{static_cast<unsigned>(p->pciDomainID), static_cast<unsigned>(p->pciBusID),
                   static_cast<unsigned>(p->pciDeviceID), 0};
      if (a == wanted) {
        *device = i;
        return cudaSuccess;
      }
    }
    return cudaErrorInvalidDevice;
  });
}
