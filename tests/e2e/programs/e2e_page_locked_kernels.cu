// Plain page-locked memory (cudaMallocHost, cudaHostAlloc without Mapped)
// handed to kernels, as unified addressing allows, on each of two devices.
// Over shm the worker maps it; over tcp and ucx its allocation becomes
// device memory kept coherent in software the first time a kernel is handed
// it. The test backend runs no kernel, so the device's side is worked
// through the device address the allocation now has: device writes there
// (what the kernel would write) are seen by the host after synchronisation,
// host writes reach the device (what the kernel would read).
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda.h>

#include "check.h"

__global__ void scale(float* data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

// E2E_PAGE_LOCKED=two_servers: the two devices are GPUs of two servers.
static bool g_two_servers = false;

struct Buffers {
  float* in;
  int* flag;
};
__global__ void through_struct(Buffers b) {
  if (*b.flag) b.in[0] = 1;
}

// On `device`: a kernel is handed `host` (n bytes); then the device writes
// `value` into its second half and reads it whole.
void exercise(int device, unsigned char* host, size_t n, unsigned char value) {
  OK(cudaSetDevice(device));
  cudaStream_t stream;
  OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::memset(host, value - 1, n);
  scale<<<1, 32, 0, stream>>>(reinterpret_cast<float*>(host), 32, 2.0f);
  OK(cudaGetLastError());
  // Its device address, as the kernel saw it.
  unsigned char* dev = nullptr;
  OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), host, 0));
  CHECK(dev != nullptr);
  cudaPointerAttributes attrs;
  OK(cudaPointerGetAttributes(&attrs, host + 4));
  CHECK(attrs.type == cudaMemoryTypeHost && attrs.hostPointer == host + 4 && attrs.devicePointer == dev + 4);
  // Every device of the server reaches it (a mapping over tcp and ucx,
  // where the server has both devices).
  const char* transport = std::getenv("RGPU_TRANSPORT");
  if (!g_two_servers && (!transport || std::strcmp(transport, "shm") != 0)) {
    CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, device};
    unsigned long long access = 0;
    CHECK(cuMemGetAccess(&access, &location, reinterpret_cast<CUdeviceptr>(dev)) == CUDA_SUCCESS);
    CHECK(access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  }
  // What the device writes lands in the host's pages.
  OK(cudaMemsetAsync(dev + n / 2, value, n / 2, stream));
  OK(cudaStreamSynchronize(stream));
  std::vector<unsigned char> seen(host, host + n);
  CHECK(seen[0] == static_cast<unsigned char>(value - 1) && seen[n / 2 - 1] == static_cast<unsigned char>(value - 1));
  CHECK(seen[n / 2] == value && seen[n - 1] == value);
  // What the host writes the device reads.
  host[0] = value + 1;
  void* buffer = nullptr;
  OK(cudaMalloc(&buffer, n));
  OK(cudaMemcpyAsync(buffer, dev, n, cudaMemcpyDeviceToDevice, stream));
  OK(cudaStreamSynchronize(stream));
  auto back = read_back(buffer, n);
  CHECK(back[0] == static_cast<unsigned char>(value + 1) && back[n / 2] == value && back[n - 1] == value);
  OK(cudaMemcpy(buffer, host, 64, cudaMemcpyHostToDevice));
  CHECK(read_back(buffer, 64)[0] == static_cast<unsigned char>(value + 1));
  // The host pointer named as device memory (XLA clears pinned buffers so).
  OK(cudaMemsetAsync(host + 1, value + 2, 3, stream));
  OK(cudaMemcpyAsync(host + 8, buffer, 4, cudaMemcpyDeviceToDevice, stream));
  OK(cudaStreamSynchronize(stream));
  CHECK(host[1] == static_cast<unsigned char>(value + 2) && host[3] == static_cast<unsigned char>(value + 2));
  CHECK(host[8] == static_cast<unsigned char>(value + 1) && host[4] == static_cast<unsigned char>(value - 1));
  OK(cudaFree(buffer));
  OK(cudaStreamDestroy(stream));
}

int main() {
  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count == 2);
  const size_t n = (1 << 20) + 4096;  // two chunks of coherent memory, the last a page

  unsigned char* plain = nullptr;
  OK(cudaMallocHost(reinterpret_cast<void**>(&plain), n));
  unsigned char* portable = nullptr;
  OK(cudaHostAlloc(reinterpret_cast<void**>(&portable), n, cudaHostAllocPortable));
  unsigned char* untouched = nullptr;
  OK(cudaMallocHost(reinterpret_cast<void**>(&untouched), n));

  const char* mode = std::getenv("E2E_PAGE_LOCKED");
  g_two_servers = mode && std::strcmp(mode, "two_servers") == 0;
  if (g_two_servers) {
    exercise(0, plain, n, 0x10);
    exercise(1, portable, n, 0x30);
    // Over tcp and ucx memory a kernel of one server's GPU was handed lies
    // there, out of the other server's GPUs' reach: refused, not wrong.
    const char* transport = std::getenv("RGPU_TRANSPORT");
    if (!transport || std::strcmp(transport, "shm") != 0) {
      OK(cudaSetDevice(1));
      scale<<<1, 32>>>(reinterpret_cast<float*>(plain), 32, 2.0f);
      EXPECT_STATUS(cudaErrorNotSupported, cudaGetLastError());
      OK(cudaSetDevice(0));
      scale<<<1, 32>>>(reinterpret_cast<float*>(portable), 32, 2.0f);
      EXPECT_STATUS(cudaErrorNotSupported, cudaGetLastError());
    }
    OK(cudaFreeHost(plain));
    OK(cudaFreeHost(portable));
    OK(cudaFreeHost(untouched));
    return finish();
  }

  // Page-locked memory is any device's: handed to kernels of both.
  exercise(0, plain, n, 0x10);
  exercise(1, plain, n, 0x20);
  exercise(1, portable, n, 0x30);
  exercise(0, portable, n, 0x40);
  // Mapped portable memory, device memory at its own address over tcp, too.
  unsigned char* mapped = nullptr;
  OK(cudaHostAlloc(reinterpret_cast<void**>(&mapped), n, cudaHostAllocMapped | cudaHostAllocPortable));
  exercise(1, mapped, n, 0x50);
  OK(cudaSetDevice(0));

  // A pointer inside a structure passed by value is seen too.
  int* flag = nullptr;
  OK(cudaMallocHost(reinterpret_cast<void**>(&flag), sizeof(int)));
  through_struct<<<1, 1>>>(Buffers{reinterpret_cast<float*>(portable), flag});
  OK(cudaGetLastError());
  void* flag_dev = nullptr;
  OK(cudaHostGetDevicePointer(&flag_dev, flag, 0));
  OK(cudaMemset(flag_dev, 0, sizeof(int)));
  OK(cudaDeviceSynchronize());
  CHECK(*flag == 0);
  *flag = 7;  // the host's write after the device's reaches the device
  int seen = 0;
  OK(cudaMemcpy(&seen, flag_dev, sizeof seen, cudaMemcpyDeviceToHost));
  CHECK(seen == 7 && *flag == 7);

  // Launches on several threads at once promote an allocation once.
  int* racy = nullptr;
  OK(cudaMallocHost(reinterpret_cast<void**>(&racy), 4096));
  racy[0] = 5;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] { scale<<<1, 32>>>(reinterpret_cast<float*>(racy), 32, 1.0f); });
  for (auto& t : threads) t.join();
  OK(cudaDeviceSynchronize());
  void* racy_dev = nullptr;
  OK(cudaHostGetDevicePointer(&racy_dev, racy, 0));
  int got = 0;
  OK(cudaMemcpy(&got, racy_dev, sizeof got, cudaMemcpyDeviceToHost));
  CHECK(got == 5 && racy[0] == 5);
  OK(cudaFreeHost(racy));

  // Pointer attributes report its host address as its device address, as
  // under unified addressing (a launch handed it promotes it), and its
  // device memory's once it has one.
  unsigned char* queried = nullptr;
  OK(cudaMallocHost(reinterpret_cast<void**>(&queried), 4096));
  CUdeviceptr attribute = 0;
  CHECK(cuPointerGetAttribute(&attribute, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                              reinterpret_cast<CUdeviceptr>(queried + 8)) == CUDA_SUCCESS);
  CHECK(attribute == reinterpret_cast<CUdeviceptr>(queried + 8));
  cudaPointerAttributes attrs;
  OK(cudaPointerGetAttributes(&attrs, queried + 8));
  CHECK(attrs.type == cudaMemoryTypeHost && attrs.devicePointer == queried + 8);
  void* queried_dev = nullptr;
  OK(cudaHostGetDevicePointer(&queried_dev, queried, 0));
  CHECK(cuPointerGetAttribute(&attribute, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                              reinterpret_cast<CUdeviceptr>(queried + 8)) == CUDA_SUCCESS);
  CHECK(attribute == reinterpret_cast<CUdeviceptr>(queried_dev) + 8);
  OK(cudaFreeHost(queried));

  // Memory never handed to the GPU keeps its plain page-locked copies.
  std::memset(untouched, 0x5a, n);
  void* buffer = nullptr;
  OK(cudaMalloc(&buffer, n));
  OK(cudaMemcpy(buffer, untouched, n, cudaMemcpyHostToDevice));
  OK(cudaMemset(buffer, 0x5b, 1));
  OK(cudaMemcpyAsync(untouched, buffer, n, cudaMemcpyDeviceToHost, nullptr));
  OK(cudaDeviceSynchronize());
  CHECK(untouched[0] == 0x5b && untouched[1] == 0x5a && untouched[n - 1] == 0x5a);
  OK(cudaPointerGetAttributes(&attrs, untouched));
  CHECK(attrs.type == cudaMemoryTypeHost && attrs.hostPointer == untouched);

  // The device memory goes with cudaFreeHost, never cudaFree.
  void* plain_dev = nullptr;
  OK(cudaHostGetDevicePointer(&plain_dev, plain, 0));
  if (plain_dev != plain) EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(plain_dev));
  OK(cudaFreeHost(plain));
  if (plain_dev != plain) EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(plain_dev, 0, 16));
  OK(cudaFreeHost(portable));
  OK(cudaFreeHost(mapped));
  OK(cudaFreeHost(untouched));
  OK(cudaFreeHost(flag));
  OK(cudaFree(buffer));
  return finish();
}
