#include "server/pool/nvml_utilization.hpp"

#include <dlfcn.h>

#include <cstdio>

#include <mutex>

namespace rgpu::server {
namespace {

// NVML's ABI, as nvml.h declares it (the toolkit does not ship the header).
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned gpu;
  unsigned memory;
};
using InitFn = int (*)();
using ByBusIdFn = int (*)(const char*, NvmlDevice*);
using UtilizationFn = int (*)(NvmlDevice, NvmlUtilization*);

struct Nvml {
  ByBusIdFn by_bus_id = nullptr;
  UtilizationFn utilization = nullptr;
};

const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    if (!init || init() != 0) return;
    n.by_bus_id = reinterpret_cast<ByBusIdFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.utilization = reinterpret_cast<UtilizationFn>(dlsym(lib, "nvmlDeviceGetUtilizationRates"));
  });
  return n;
}

}  // namespace

std::string pci_bus_id(const cudaDeviceProp& prop) {
  char id[32];
  snprintf(id, sizeof id, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  return id;
}

bool nvml_utilization(const char* pci_bus_id, int* percent) {
  const Nvml& n = nvml();
  NvmlDevice device = nullptr;
  NvmlUtilization u{};
  if (!n.by_bus_id || !n.utilization || n.by_bus_id(pci_bus_id, &device) != 0 || n.utilization(device, &u) != 0)
    return false;
  *percent = static_cast<int>(u.gpu);
  return true;
}

}  // namespace rgpu::server
