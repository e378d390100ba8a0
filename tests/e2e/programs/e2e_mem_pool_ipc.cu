// Memory pools shared between two application processes, each with a
// worker of its own (as NVIDIA's streamOrderedAllocationIPC sample): the
// parent makes a pool with POSIX descriptor handles, allocates from it,
// exports the pool as a descriptor and the allocation as export data, and
// passes both over a Unix socket; the child imports the pool and the
// pointer, reads the parent's data, writes its own and frees its import.
// Over tcp and ucx the descriptor is a stand-in the client made, which
// works the same way. The child uses the driver API's names of the same
// calls.
#include <cuda.h>
#include <fcntl.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "check.h"
#include "fd_passing.h"

static const size_t kBytes = 3 * 4096 + 100;  // not whole pages

static unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 37 + 11); }

static int child(int socket) {
  cudaMemPoolPtrExportData data;
  int fd = receive_fd(socket, &data, sizeof data);
  CHECK(fd >= 0);
  CHECK(cuInit(0) == CUDA_SUCCESS);
  CUmemoryPool pool = nullptr;
  CHECK(cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  close(fd);
  CUdeviceptr p = 0;
  CHECK(cuMemPoolImportPointer(&p, pool, reinterpret_cast<CUmemPoolPtrExportData*>(&data)) == CUDA_SUCCESS);
  unsigned char* shared = reinterpret_cast<unsigned char*>(p);
  std::vector<unsigned char> back = read_back(shared, kBytes);
  bool same = true;
  for (size_t i = 0; i < kBytes; ++i) same &= back[i] == pattern(i);
  CHECK(same);
  OK(cudaMemset(shared + kBytes / 2, 0x3c, kBytes - kBytes / 2));
  OK(cudaDeviceSynchronize());
  // Imported pools lend pointers; they never allocate.
  void* more = nullptr;
  cudaMemPool_t as_runtime = reinterpret_cast<cudaMemPool_t>(pool);
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMallocFromPoolAsync(&more, 4096, as_runtime, 0));
  OK(cudaDeviceSynchronize());
  CHECK(cuMemFree(p) == CUDA_SUCCESS);  // the importer frees its import first
  EXPECT_STATUS(cudaErrorInvalidValue, cudaFree(shared));
  OK(cudaMemPoolDestroy(as_runtime));
  char done = 1;
  CHECK(write(socket, &done, 1) == 1);
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(std::atoi(argv[2]));

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  cudaMemPool_t pool;
  OK(cudaMemPoolCreate(&pool, &props));
  cudaStream_t stream;
  OK(cudaStreamCreate(&stream));
  unsigned char* d = nullptr;
  OK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&d), kBytes, pool, stream));
  std::vector<unsigned char> data(kBytes);
  for (size_t i = 0; i < kBytes; ++i) data[i] = pattern(i);
  OK(cudaMemcpyAsync(d, data.data(), kBytes, cudaMemcpyHostToDevice, stream));
  OK(cudaStreamSynchronize(stream));

  int types = -1;
  OK(cudaDeviceGetAttribute(&types, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
  // Export data is bytes: it works on any transport.
  cudaMemPoolPtrExportData export_data;
  OK(cudaMemPoolExportPointer(&export_data, d));
  int fd = -1;
  CHECK(types & cudaMemHandleTypePosixFileDescriptor);  // on every transport
  OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  CHECK(fd >= 0 && fcntl(fd, F_GETFD) >= 0);
  int socket = -1;
  pid_t pid = start_child(argv[0], &socket);
  CHECK(send_fd(socket, fd, &export_data, sizeof export_data));
  close(fd);
  char done = 0;
  CHECK(read(socket, &done, 1) == 1 && done == 1);
  CHECK(child_passed(pid));
  close(socket);
  std::vector<unsigned char> back = read_back(d, kBytes);
  CHECK(back[0] == pattern(0) && back[kBytes / 2 - 1] == pattern(kBytes / 2 - 1));
  CHECK(back[kBytes / 2] == 0x3c && back[kBytes - 1] == 0x3c);

  // Bad handles: no pool behind the descriptor, a pointer the pool never
  // exported, a descriptor that is not open.
  cudaMemPool_t bad;
  int null_fd = open("/dev/null", O_RDONLY);
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaMemPoolImportFromShareableHandle(&bad, reinterpret_cast<void*>(static_cast<intptr_t>(null_fd)),
                                                     cudaMemHandleTypePosixFileDescriptor, 0));
  close(null_fd);
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaMemPoolImportFromShareableHandle(&bad, reinterpret_cast<void*>(intptr_t{-1}),
                                                     cudaMemHandleTypePosixFileDescriptor, 0));
  // This process's own pool is not imported: it takes no pointers.
  void* p = nullptr;
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPoolImportPointer(&p, pool, &export_data));
  // Pools made without handle types, and memory not of a shareable pool,
  // cannot be exported.
  cudaMemPool_t plain;
  props.handleTypes = cudaMemHandleTypeNone;
  OK(cudaMemPoolCreate(&plain, &props));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaMemPoolExportToShareableHandle(&fd, plain, cudaMemHandleTypePosixFileDescriptor, 0));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypeNone, 0));
  EXPECT_STATUS(cudaErrorInvalidValue,
                cudaMemPoolExportToShareableHandle(nullptr, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  void* ordinary = nullptr;
  OK(cudaMalloc(&ordinary, 4096));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPoolExportPointer(&export_data, ordinary));
  EXPECT_STATUS(cudaErrorInvalidValue, cudaMemPoolExportPointer(&export_data, data.data()));
  OK(cudaFree(ordinary));
  OK(cudaMemPoolDestroy(plain));

  OK(cudaFreeAsync(d, stream));
  OK(cudaStreamSynchronize(stream));
  OK(cudaMemPoolDestroy(pool));
  OK(cudaStreamDestroy(stream));
  return finish();
}
