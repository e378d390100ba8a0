// Driver API shareable handles between two application processes, each with
// a worker of its own: the parent exports a cuMemCreate allocation as a
// POSIX file descriptor and passes it over a Unix socket; the child
// imports it, maps it, reads the parent's data and writes its own, which
// the parent then reads. Over shm the descriptor is the worker's own; over
// tcp and ucx a stand-in the client made, which works the same way. Bad
// handles are refused clearly, and so are bad ranges of
// cuMemGetHandleForAddressRange.
#include <fcntl.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "driver_check.h"
#include "fd_passing.h"
#include "shareable_vmm.h"

static unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 31 + 5); }

static int child(int socket) {
  size_t size = 0;
  int fd = receive_fd(socket, &size, sizeof size);
  CHECK(fd >= 0);
  CU_OK(cuInit(0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
  CUmemGenericAllocationHandle h = 0;
  CU_OK(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);  // the application's to close once imported
  CUmemAllocationProp got{};
  CU_OK(cuMemGetAllocationPropertiesFromHandle(&got, h));
  CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
        got.location.id == 0);

  CUdeviceptr base = map_whole(h, size);
  std::vector<unsigned char> back(size);
  CU_OK(cuMemcpyDtoH(back.data(), base, size));
  bool same = true;
  for (size_t i = 0; i < size; ++i) same &= back[i] == pattern(i);
  CHECK(same);
  CU_OK(cuMemsetD8(base + size / 2, 0x5a, size / 2));
  CU_OK(cuCtxSynchronize());
  unmap_whole(base, size);
  CU_OK(cuMemRelease(h));
  char done = 1;
  CHECK(write(socket, &done, 1) == 1);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(std::atoi(argv[2]));
  CU_OK(cuInit(0));
  if (g_failures) return finish();  // no server: nothing below can work
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));

  const size_t size = 2 * granularity();
  CUmemAllocationProp prop = shareable_prop();
  CUmemGenericAllocationHandle h = 0;
  CU_OK(cuMemCreate(&h, size, &prop, 0));
  CUdeviceptr base = map_whole(h, size);
  std::vector<unsigned char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = pattern(i);
  CU_OK(cuMemcpyHtoD(base, data.data(), size));

  int supported = -1;
  CU_OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  // Offered on every transport.
  CHECK(supported == 1);
  int fd = -1;
  CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CHECK(fd >= 0 && fcntl(fd, F_GETFD) >= 0);
  int socket = -1;
  pid_t pid = start_child(argv[0], &socket);
  CHECK(send_fd(socket, fd, &size, sizeof size));
  close(fd);  // the child has its own copy
  char done = 0;
  CHECK(read(socket, &done, 1) == 1 && done == 1);
  CHECK(child_passed(pid));
  close(socket);
  // The child's writes are in this process's allocation.
  std::vector<unsigned char> back(size);
  CU_OK(cuMemcpyDtoH(back.data(), base, size));
  CHECK(back[0] == pattern(0) && back[size / 2 - 1] == pattern(size / 2 - 1));
  CHECK(back[size / 2] == 0x5a && back[size - 1] == 0x5a);

  // A second export is another descriptor of the same memory: imported
  // here too, it maps what the first mapping shows.
  CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemGenericAllocationHandle again = 0;
  CU_OK(cuMemImportFromShareableHandle(&again, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CUdeviceptr other = map_whole(again, size);
  CU_OK(cuMemsetD8(other, 0x77, 16));
  unsigned char first[16];
  CU_OK(cuMemcpyDtoH(first, base, sizeof first));
  CHECK(first[0] == 0x77 && first[15] == 0x77);
  unmap_whole(other, size);
  CU_OK(cuMemRelease(again));

  // Bad handles: not an open descriptor, not memory of this server's
  // driver, a type the allocation did not ask for.
  CUmemGenericAllocationHandle bad;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(intptr_t{-1}),
                                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  int null_fd = open("/dev/null", O_RDONLY);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(null_fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CHECK(fcntl(null_fd, F_GETFD) >= 0);  // still the application's
  close(null_fd);
  CUmemAllocationProp plain = shareable_prop();
  plain.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  CUmemGenericAllocationHandle unshared = 0;
  CU_OK(cuMemCreate(&unshared, size, &plain, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemExportToShareableHandle(&fd, unshared, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_OK(cuMemRelease(unshared));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemExportToShareableHandle(&fd, 987654, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemExportToShareableHandle(nullptr, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_NONE, 0));
  // Fabric handles travel as bytes on any transport; this server's GPUs
  // (the test backend) have no fabric, as GPUs without NVLink fabric.
  CUmemFabricHandle fabric;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemExportToShareableHandle(&fabric, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  std::memset(&fabric, 0, sizeof fabric);
  CUmemGenericAllocationHandle from_fabric;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemImportFromShareableHandle(&from_fabric, &fabric, CU_MEM_HANDLE_TYPE_FABRIC));

  // dma-buf descriptors of device ranges: the test backend's GPUs have no
  // dma-buf (as GPUs whose driver lacks it); over tcp no descriptor could
  // reach this process anyway. Bad ranges are refused first.
  int dma_buf = -1;
  CU_OK(cuDeviceGetAttribute(&dma_buf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0));
  CHECK(dma_buf == 0);
  CUdeviceptr linear = 0;
  CU_OK(cuMemAlloc(&linear, 1 << 16));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cuMemGetHandleForAddressRange(&fd, linear, 1 << 16, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(nullptr, linear, 1 << 16, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(&fd, linear, 1 << 17, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(&fd, reinterpret_cast<CUdeviceptr>(data.data()), 4096,
                                          CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemGetHandleForAddressRange(&fd, linear, 1 << 16, static_cast<CUmemRangeHandleType>(7), 0));
  CU_OK(cuMemFree(linear));

  unmap_whole(base, size);
  CU_OK(cuMemRelease(h));
  return finish();
}
