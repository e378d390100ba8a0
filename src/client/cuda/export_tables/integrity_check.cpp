// The integrity check table: NVIDIA's runtime asks the driver to prove it is
// the driver the runtime expects (integrity_hash.hpp) and refuses to run on
// any other. rgpu answers from its own view of the devices, which is what
// the runtime itself sees through rgpu.
#include <pthread.h>
#include <unistd.h>

#include <vector>

#include "client/cuda/export_tables/export_tables.hpp"
#include "client/cuda/export_tables/integrity_hash.hpp"

namespace rgpu::client {

namespace {

CUresult CUDAAPI check(uint32_t version, uint64_t unix_seconds, uint64_t* result);

CUresult device_identities(std::vector<DeviceIdentity>* out) {
  int count = 0;
  if (CUresult e = cuDeviceGetCount(&count)) return e;
  for (int d = 0; d < count; ++d) {
    DeviceIdentity id{};
    if (CUresult e = cuDeviceGetUuid_v2(&id.uuid, d)) return e;
    if (CUresult e = cuDeviceGetAttribute(&id.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d)) return e;
    if (CUresult e = cuDeviceGetAttribute(&id.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d)) return e;
    if (CUresult e = cuDeviceGetAttribute(&id.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d)) return e;
    out->push_back(id);
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI check(uint32_t version, uint64_t unix_seconds, uint64_t* result) {
  if (!result) return CUDA_ERROR_INVALID_VALUE;
  int driver_version = 0;
  if (CUresult e = cuDriverGetVersion(&driver_version)) return e;
  std::vector<DeviceIdentity> devices;
  if (CUresult e = device_identities(&devices)) return e;
  const IntegrityInput input{static_cast<uint32_t>(driver_version),
                             version,
                             static_cast<uint32_t>(getpid()),
                             static_cast<uint32_t>(pthread_self()),
                             cudart_interface_table(),
                             integrity_check_table(),
                             reinterpret_cast<const void*>(&check),
                             unix_seconds};
  const auto hash = integrity_hash(input, devices);
  result[0] = hash[0];
  result[1] = hash[1];
  return CUDA_SUCCESS;
}

}  // namespace

const void* integrity_check_table() {
  static const ExportTable<ExportTableId::integrity_check, 3> table(true, {{1, slot_fn(check)}});
  return table.data();
}

}  // namespace rgpu::client
