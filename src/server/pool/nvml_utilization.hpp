// GPU utilisation from NVML, opened at run time (libnvidia-ml.so.1) so that
// nothing links to it: a host without it reports no utilisation.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

namespace rgpu::server {
// The PCI bus id of a GPU, as NVML names it, from its properties.
std::string pci_bus_id(const cudaDeviceProp& prop);
// The GPU's busy percentage over NVML's last sample period; false when
// NVML is missing or does not know the GPU of this PCI bus id.
bool nvml_utilization(const char* pci_bus_id, int* percent);
}
