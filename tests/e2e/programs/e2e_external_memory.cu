// External memory, on the host-test backend: a memfd stands for memory
// another API exported (host-test maps it; a GPU's driver would take a
// Vulkan or CUDA export). Over shm the descriptor reaches the server: a
// mapped buffer reads what the application wrote into the file, writes
// through it land in the file, a mipmapped array lies over it; bad handles,
// offsets and sizes are refused. Over tcp the import is not supported.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

// A file of n bytes, each (i * 7 + 3), mapped here at *view.
static int make_file(size_t n, unsigned char** view) {
  // Sealed at its size, as the server requires of memory it maps.
  int fd = memfd_create("e2e-external-memory", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(n)) != 0) return -1;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  *view = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) (*view)[i] = static_cast<unsigned char>(i * 7 + 3);
  return fd;
}

static bool fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

int main() {
  const char* transport = std::getenv("RGPU_TRANSPORT");
  bool shm = transport && std::strcmp(transport, "shm") == 0;
  const size_t n = 1 << 20;
  unsigned char* view = nullptr;
  int fd = make_file(n, &view);
  CHECK(fd >= 0);

  cudaExternalMemoryHandleDesc desc{};
  desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
  desc.handle.fd = fd;
  desc.size = n;
  cudaExternalMemory_t mem = nullptr;
  if (!shm) {
    EXPECT_STATUS(cudaErrorNotSupported, cudaImportExternalMemory(&mem, &desc));
    CHECK(fd_open(fd));  // still the application's
    return finish();
  }

  // Refused before anything is imported: the descriptor stays the application's.
  cudaExternalMemoryHandleDesc bad = desc;
  bad.type = cudaExternalMemoryHandleTypeOpaqueWin32;
  EXPECT_STATUS(cudaErrorNotSupported, cudaImportExternalMemory(&mem, &bad));
  bad = desc;
  bad.handle.fd = 1000000;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaImportExternalMemory(&mem, &bad));
  bad = desc;
  bad.size = 0;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaImportExternalMemory(&mem, &bad));
  bad = desc;
  bad.size = 4 * n;  // larger than the file
  EXPECT_STATUS(cudaErrorInvalidValue, cudaImportExternalMemory(&mem, &bad));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaImportExternalMemory(nullptr, &desc));
  CHECK(fd_open(fd));

  // A successful import takes the descriptor, as CUDA does.
  OK(cudaImportExternalMemory(&mem, &desc));
  CHECK(!fd_open(fd));

  cudaExternalMemoryBufferDesc buf{};
  buf.offset = 4096;
  buf.size = 65536;
  unsigned char* d = nullptr;
  OK(cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d), mem, &buf));
  std::vector<unsigned char> back = read_back(d, buf.size);
  bool same = true;
  for (size_t i = 0; i < buf.size; ++i) same &= back[i] == static_cast<unsigned char>((i + 4096) * 7 + 3);
  CHECK(same);

  // Writes through the buffer (a copy and a memset) are in the file.
  std::vector<unsigned char> host(256, 0x5a);
  OK(cudaMemcpy(d + 100, host.data(), host.size(), cudaMemcpyHostToDevice));
  OK(cudaMemsetAsync(d + 1000, 0x33, 24));
  OK(cudaDeviceSynchronize());
  CHECK(view[4096 + 100] == 0x5a && view[4096 + 355] == 0x5a && view[4096 + 356] != 0x5a);
  CHECK(view[4096 + 1000] == 0x33 && view[4096 + 1023] == 0x33);
  // And device-to-device copies take it like any allocation.
  unsigned char* other = nullptr;
  OK(cudaMalloc(&other, 4096));
  OK(cudaMemcpy(other, d, 4096, cudaMemcpyDeviceToDevice));
  CHECK(read_back(other, 4096)[100] == 0x5a);
  cudaPointerAttributes attrs;
  OK(cudaPointerGetAttributes(&attrs, d + 10));
  CHECK(attrs.type == cudaMemoryTypeDevice && attrs.device == 0);

  // Ranges outside the memory, flags, bad handles.
  unsigned char* d2 = nullptr;
  cudaExternalMemoryBufferDesc outside{};
  outside.offset = n - 100;
  outside.size = 200;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d2), mem, &outside));
  outside.offset = 2 * n;
  outside.size = 1;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d2), mem, &outside));
  outside = buf;
  outside.size = 0;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d2), mem, &outside));
  int not_a_handle = 0;
  auto bogus = reinterpret_cast<cudaExternalMemory_t>(&not_a_handle);
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d2), bogus, &buf));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle, cudaDestroyExternalMemory(bogus));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemset(d + buf.size - 8, 0, 64));  // past the buffer's end

  // A mipmapped array over the memory: level 0 holds the file's bytes from the offset.
  cudaExternalMemoryMipmappedArrayDesc mdesc{};
  mdesc.offset = 8192;
  mdesc.formatDesc = cudaCreateChannelDesc<unsigned char>();
  mdesc.extent = make_cudaExtent(64, 16, 0);
  mdesc.numLevels = 3;
  cudaMipmappedArray_t mip = nullptr;
  OK(cudaExternalMemoryGetMappedMipmappedArray(&mip, mem, &mdesc));
  cudaArray_t level0 = nullptr;
  OK(cudaGetMipmappedArrayLevel(&level0, mip, 0));
  std::vector<unsigned char> rows(64 * 16);
  OK(cudaMemcpy2DFromArray(rows.data(), 64, level0, 0, 0, 64, 16, cudaMemcpyDeviceToHost));
  CHECK(rows[0] == static_cast<unsigned char>(8192 * 7 + 3) && rows[64 * 15 + 63] == view[8192 + 64 * 15 + 63]);
  cudaExternalMemoryMipmappedArrayDesc too_far = mdesc;
  too_far.offset = n - 16;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaExternalMemoryGetMappedMipmappedArray(&mip, mem, &too_far));
  OK(cudaFreeMipmappedArray(mip));

  // Destroyed: no more buffers from it; the buffer already mapped is freed as CUDA requires.
  OK(cudaDestroyExternalMemory(mem));
  EXPECT_STATUS(cudaErrorInvalidResourceHandle,
                cudaExternalMemoryGetMappedBuffer(reinterpret_cast<void**>(&d2), mem, &buf));
  OK(cudaFree(d));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(d));
  OK(cudaFree(other));
  return finish();
}
