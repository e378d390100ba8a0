// The answer to NVIDIA's runtime's driver integrity check (slot 1 of the
// integrity-check table): an HMAC-MD2, under a key fixed in NVIDIA's
// runtime, of what the runtime can check on its own side: the driver
// version, this process and thread, the addresses of the tables it was given
// and of the check function, the time it passed, and each device's UUID and
// PCI location. The runtime computes the same and refuses a driver whose
// answer differs (cudaErrorSoftwareValidityNotEstablished). The algorithm
// was worked out by the ZLUDA project; rgpu's tracer uses it too.
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <span>

namespace rgpu::client {

struct IntegrityInput {
  uint32_t driver_version;
  uint32_t check_version;  // the runtime's, first argument of the check
  uint32_t process;
  uint32_t thread;  // pthread_self, truncated
  const void* cudart_table;
  const void* integrity_table;
  const void* check_function;
  uint64_t unix_seconds;  // the runtime's, second argument of the check
};
static_assert(sizeof(IntegrityInput) == 48);

struct DeviceIdentity {
  CUuuid uuid;
  int32_t pci_domain;
  int32_t pci_bus;
  int32_t pci_device;
};
static_assert(sizeof(DeviceIdentity) == 28);

std::array<uint64_t, 2> integrity_hash(const IntegrityInput& input, std::span<const DeviceIdentity> devices);

// The driver calls whose answers the runtime checks the hash against: rgpu's
// own, or NVIDIA's behind the driver tracer.
struct DriverQueries {
  CUresult(CUDAAPI* driver_version)(int*);
  CUresult(CUDAAPI* device_count)(int*);
  CUresult(CUDAAPI* device_uuid)(CUuuid*, CUdevice);
  CUresult(CUDAAPI* device_attribute)(int*, CUdevice_attribute, CUdevice);
};

// The whole answer for the calling process and thread: the inputs gathered
// through `driver`, hashed into result.
CUresult integrity_answer(const DriverQueries& driver, uint32_t check_version, uint64_t unix_seconds,
                          const void* cudart_table, const void* integrity_table, const void* check_function,
                          uint64_t* result);

}  // namespace rgpu::client
