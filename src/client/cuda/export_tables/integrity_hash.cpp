#include "client/cuda/export_tables/integrity_hash.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "client/cuda/export_tables/md2.hpp"

namespace rgpu::client {

namespace {

constexpr uint8_t kKey[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                              0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};

void add_key(Md2& md, uint8_t pad) {
  uint8_t block[16];
  for (size_t i = 0; i < sizeof block; ++i) block[i] = kKey[i] ^ pad;
  md.update(block, sizeof block);
}

std::array<uint64_t, 2> words(const std::array<uint8_t, 16>& digest) {
  std::array<uint64_t, 2> w;
  std::memcpy(w.data(), digest.data(), sizeof w);
  return w;
}

}  // namespace

std::array<uint64_t, 2> integrity_hash(const IntegrityInput& input, std::span<const DeviceIdentity> devices) {
  // Check versions ending in 0 and 1 get fixed answers (seen from NVIDIA's
  // driver: these are what it returns for 13000 and 13001).
  switch (input.check_version % 10) {
    case 0: return {0x3341181C03CB675CULL, 0x8ED383AA1F4CD1E8ULL};
    case 1: return {0x1841181C03CB675CULL, 0x8ED383AA1F4CD1E8ULL};
    default: break;
  }
  Md2 inner;
  add_key(inner, 0x36);
  inner.update(&input, sizeof input);
  for (const DeviceIdentity& d : devices) inner.update(&d, sizeof d);
  const std::array<uint8_t, 16> inner_digest = inner.finish();
  Md2 outer;
  add_key(outer, 0x5c);
  outer.update(inner_digest.data(), inner_digest.size());
  return words(outer.finish());
}

CUresult integrity_answer(const DriverQueries& driver, uint32_t check_version, uint64_t unix_seconds,
                          const void* cudart_table, const void* integrity_table, const void* check_function,
                          uint64_t* result) {
  if (!result) return CUDA_ERROR_INVALID_VALUE;
  int driver_version = 0, count = 0;
  if (CUresult e = driver.driver_version(&driver_version)) return e;
  if (CUresult e = driver.device_count(&count)) return e;
  std::vector<DeviceIdentity> devices(count);
  for (int d = 0; d < count; ++d) {
    DeviceIdentity& id = devices[d];
    if (CUresult e = driver.device_uuid(&id.uuid, d)) return e;
    if (CUresult e = driver.device_attribute(&id.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d)) return e;
    if (CUresult e = driver.device_attribute(&id.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d)) return e;
    if (CUresult e = driver.device_attribute(&id.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d)) return e;
  }
  const IntegrityInput input{static_cast<uint32_t>(driver_version),
                             check_version,
                             static_cast<uint32_t>(getpid()),
                             static_cast<uint32_t>(pthread_self()),
                             cudart_table,
                             integrity_table,
                             check_function,
                             unix_seconds};
  const auto hash = integrity_hash(input, devices);
  result[0] = hash[0];
  result[1] = hash[1];
  return CUDA_SUCCESS;
}

}  // namespace rgpu::client
