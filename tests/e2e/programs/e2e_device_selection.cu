// Choosing a device by properties and by PCI bus id, and the valid-device
// list of threads that chose none, over two GPUs.
#include <cstdio>
#include <cstring>
#include <thread>

#include "check.h"

int main() {
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);
  cudaDeviceProp props[2];
  for (int i = 0; i < count; ++i) OK(cudaGetDeviceProperties(&props[i], i));

  // Each device is found by its own bus id, in both spellings.
  for (int i = 0; i < count; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", props[i].pciDomainID, props[i].pciBusID, props[i].pciDeviceID);
    int device = -1;
    OK(cudaDeviceGetByPCIBusId(&device, id));
    CHECK(device == i);
    std::snprintf(id, sizeof id, "%02X:%02X.0", props[i].pciBusID, props[i].pciDeviceID);
    device = -1;
    OK(cudaDeviceGetByPCIBusId(&device, id));
    CHECK(device == i);
  }
  int device = -1;
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaDeviceGetByPCIBusId(&device, "00ff:ff:1f.0"));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceGetByPCIBusId(&device, "not a bus id"));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaDeviceGetByPCIBusId(nullptr, "0000:00:00.0"));

  // Asking for nothing picks the first device; asking for what only
  // exists on none still picks one that meets most.
  cudaDeviceProp want;
  std::memset(&want, 0, sizeof want);
  OK(cudaChooseDevice(&device, &want));
  CHECK(device == 0);
  want.major = props[0].major;
  want.minor = props[0].minor;
  OK(cudaChooseDevice(&device, &want));
  CHECK(device == 0);
  want.major = 99;
  OK(cudaChooseDevice(&device, &want));
  CHECK(device >= 0 && device < count);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaChooseDevice(&device, nullptr));

  // A thread that never chose a device gets the list's first.
  int valid[] = {1, 0};
  OK(cudaSetValidDevices(valid, 2));
  OK(cudaGetDevice(&device));
  CHECK(device == 1);
  std::thread([] {
    int d = -1;
    OK(cudaGetDevice(&d));
    CHECK(d == 1);
    void* p = nullptr;
    OK(cudaMalloc(&p, 64));
    cudaPointerAttributes attr;
    OK(cudaPointerGetAttributes(&attr, p));
    CHECK(attr.device == 1);
    OK(cudaFree(p));
  }).join();
  std::thread([] {
    OK(cudaSetDevice(0));
    int d = -1;
    OK(cudaGetDevice(&d));
    CHECK(d == 0);
  }).join();
  int bad[] = {0, 7};
  EXPECT_STATUS(cudaErrorInvalidDevice, cudaSetValidDevices(bad, 2));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaSetValidDevices(nullptr, 1));
  int too_many[] = {0, 1, 0};
  EXPECT_STATUS(cudaErrorInvalidValue, cudaSetValidDevices(too_many, 3));
  OK(cudaSetValidDevices(nullptr, 0));
  OK(cudaGetDevice(&device));
  CHECK(device == 0);
  return finish();
}
