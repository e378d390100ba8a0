// Memory the application allocated itself and registered (cudaHostRegister),
// as NPP does with malloc'd buffers before asking for their device pointer.
// Over shm its pages become memory the worker maps: it gets a device
// address, the device reads and writes the application's bytes in place, a
// kernel may be handed the host pointer, and after cudaHostUnregister the
// memory stays the application's, contents and neighbours intact. Memory
// that is not private anonymous (a file's pages) registers for copies only.
// Over tcp registered memory has no device address.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "check.h"

__global__ void touch(int* p) { *p = 1; }

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  const size_t n = (1 << 20) + 100;
  // malloc'd, not page aligned, with neighbours on its first and last pages.
  auto* before = static_cast<unsigned char*>(std::malloc(64));
  auto* buf = static_cast<unsigned char*>(std::malloc(n));
  auto* after = static_cast<unsigned char*>(std::malloc(64));
  std::memset(before, 0xb1, 64);
  std::memset(after, 0xa1, 64);
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(i * 7 + 3);

  OK(cudaHostRegister(buf, n, cudaHostRegisterDefault));
  EXPECT_STATUS(cudaErrorHostMemoryAlreadyRegistered, cudaHostRegister(buf, n, cudaHostRegisterDefault));
  CHECK(buf[0] == 3 && buf[n - 1] == static_cast<unsigned char>((n - 1) * 7 + 3));
  CHECK(before[0] == 0xb1 && before[63] == 0xb1 && after[0] == 0xa1);
  unsigned char* dev = nullptr;
  if (!shm) {
    EXPECT_STATUS(cudaErrorNotSupported, cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), buf, 0));
  } else {
    OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), buf, 0));
    CHECK(dev != nullptr);
    unsigned char* inner = nullptr;
    OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&inner), buf + 1000, 0));
    CHECK(inner == dev + 1000);
    cudaPointerAttributes a;
    OK(cudaPointerGetAttributes(&a, buf + 8));
    CHECK(a.type == cudaMemoryTypeHost && a.devicePointer == dev + 8);
    // The device reads the application's bytes in place...
    void* d = nullptr;
    OK(cudaMalloc(&d, n));
    OK(cudaMemcpy(d, dev, n, cudaMemcpyDeviceToDevice));
    std::vector<unsigned char> back = read_back(d, n);
    CHECK(std::memcmp(back.data(), buf, n) == 0);
    // ...its writes land in them, and the host's writes reach it.
    OK(cudaMemset(dev + 10, 0x5a, 20));
    OK(cudaDeviceSynchronize());
    CHECK(buf[9] == static_cast<unsigned char>(9 * 7 + 3) && buf[10] == 0x5a && buf[29] == 0x5a &&
          buf[30] == static_cast<unsigned char>(30 * 7 + 3));
    buf[n - 1] = 0x77;
    OK(cudaMemcpy(d, dev + n - 1, 1, cudaMemcpyDeviceToDevice));
    CHECK(read_back(d, 1)[0] == 0x77);
    // A kernel may be handed the host pointer (launches are checked here, not run).
    cudaGetLastError();  // the refused second registration's
    touch<<<1, 1>>>(reinterpret_cast<int*>(buf));
    OK(cudaGetLastError());
    touch<<<1, 1>>>(reinterpret_cast<int*>(dev));
    OK(cudaDeviceSynchronize());
    OK(cudaFree(d));
  }
  // Copies through it work on every transport.
  void* d2 = nullptr;
  OK(cudaMalloc(&d2, n));
  OK(cudaMemcpy(d2, buf, n, cudaMemcpyHostToDevice));
  std::vector<unsigned char> copied = read_back(d2, n);
  CHECK(std::memcmp(copied.data(), buf, n) == 0);

  OK(cudaHostUnregister(buf));
  EXPECT_STATUS(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(buf));
  // The memory stays the application's: readable, writable, freeable.
  CHECK(buf[0] == 3 && before[0] == 0xb1 && after[63] == 0xa1);
  buf[1] = 0x11;
  before[1] = 0x12;
  CHECK(buf[1] == 0x11 && before[1] == 0x12);
  cudaPointerAttributes a;
  OK(cudaPointerGetAttributes(&a, buf));
  CHECK(a.type == cudaMemoryTypeUnregistered);
  OK(cudaMemcpy(buf, d2, 16, cudaMemcpyDeviceToHost));
  CHECK(buf[1] == static_cast<unsigned char>(1 * 7 + 3));
  std::free(buf);
  std::free(before);
  std::free(after);

  // A local variable, on the main thread's stack and on another thread's (NPP
  // registers one and has a kernel write its result there): over shm it gets
  // a device address; the frames around it keep their values.
  auto local_variable = [&] {
    volatile int guard_above = 0x1234;
    int result = 7;
    volatile int guard_below = 0x5678;
    // Twice: the second time its page is already the first registration's memfd.
    for (int again = 0; again < 2; ++again) {
      OK(cudaHostRegister(&result, sizeof result, cudaHostRegisterDefault));
      int* dev_result = nullptr;
      cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_result), &result, 0);
      CHECK(shm ? e == cudaSuccess : e == cudaErrorNotSupported);
      if (shm) {
        OK(cudaMemset(dev_result, 0, sizeof result));
        OK(cudaDeviceSynchronize());
        CHECK(result == 0);
      }
      OK(cudaHostUnregister(&result));
    }
    result += 5;
    CHECK(guard_above == 0x1234 && guard_below == 0x5678 && result == (shm ? 5 : 12));
  };
  local_variable();
  std::thread(local_variable).join();
  cudaGetLastError();

  // A file's pages cannot become shared memory: registered for copies only.
  char path[] = "/tmp/rgpu-registered-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && ftruncate(fd, 8192) == 0);
  void* file = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(file != MAP_FAILED);
  OK(cudaHostRegister(file, 8192, cudaHostRegisterDefault));
  cudaGetLastError();
  EXPECT_STATUS(cudaErrorNotSupported, cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), file, 0));
  touch<<<1, 1>>>(static_cast<int*>(file));
  EXPECT_STATUS(cudaErrorNotSupported, cudaGetLastError());
  OK(cudaMemcpy(file, d2, 8192, cudaMemcpyDeviceToHost));
  CHECK(static_cast<unsigned char*>(file)[5] == static_cast<unsigned char>(5 * 7 + 3));
  OK(cudaHostUnregister(file));
  munmap(file, 8192);
  close(fd);
  unlink(path);
  OK(cudaFree(d2));
  return finish();
}
