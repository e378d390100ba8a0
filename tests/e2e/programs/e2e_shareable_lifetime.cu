// How long a POSIX descriptor handle lasts between two application
// processes, and what a tampered one gets. A child exports a cuMemCreate
// allocation and passes its descriptor to the parent over a Unix socket.
// - Imported before the exporter exits, the memory stays the importer's
//   after it exits (as with CUDA: an import holds the allocation).
// - Not imported before the exporter exits: over shm the descriptor is the
//   driver's and imports still; over tcp and ucx it is a stand-in whose
//   export ends with the exporter's worker (README: known limits): it
//   imports while that worker has not yet seen its client go, and fails
//   with CUDA_ERROR_INVALID_VALUE after (the fault test
//   DescriptorHandles.AnExportEndsWithItsAllocationOrItsSession waits for
//   the worker).
// - A stand-in's bytes copied into an unsealed memfd, or with one bit of
//   its secret changed, import nothing; the real one imports after them.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "driver_check.h"
#include "fd_passing.h"
#include "shareable_vmm.h"

static unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 13 + 7); }

static bool over_network() {
  const char* t = std::getenv("RGPU_TRANSPORT");
  return t && std::strcmp(t, "shm") != 0;
}

static void use_device_0() {
  CU_OK(cuInit(0));
  CUcontext ctx;
  CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_OK(cuCtxSetCurrent(ctx));
}

// The exporter: fills an allocation, sends its descriptor and size, waits
// for the parent's byte, then exits without releasing anything.
static int exporter(int socket) {
  use_device_0();
  CUmemAllocationProp prop = shareable_prop();
  size_t size = granularity();
  CUmemGenericAllocationHandle h = 0;
  CU_OK(cuMemCreate(&h, size, &prop, 0));
  CUdeviceptr base = map_whole(h, size);
  std::vector<unsigned char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = pattern(i);
  CU_OK(cuMemcpyHtoD(base, data.data(), size));
  int fd = -1;
  CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CHECK(send_fd(socket, fd, &size, sizeof size));
  char go = 0;
  CHECK(read(socket, &go, 1) == 1);
  return g_failures ? 1 : 0;
}

static CUresult import_fd(CUmemGenericAllocationHandle* h, int fd) {
  return cuMemImportFromShareableHandle(h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
}

// Starts an exporter; its descriptor goes to *fd, the allocation's size to *size.
static pid_t start_exporter(const char* argv0, int* socket, int* fd, size_t* size) {
  pid_t pid = start_child(argv0, socket);
  *fd = receive_fd(*socket, size, sizeof *size);
  CHECK(*fd >= 0);
  return pid;
}

static void end_exporter(pid_t pid, int socket) {
  char go = 1;
  CHECK(write(socket, &go, 1) == 1);
  CHECK(child_passed(pid));
  close(socket);
}

// A memfd with `bytes`, sealed as a stand-in is when `seal`.
static int memfd_with(const std::vector<unsigned char>& bytes, bool seal) {
  int fd = memfd_create("copy", MFD_ALLOW_SEALING);
  CHECK(pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  if (seal) CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0);
  return fd;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return exporter(std::atoi(argv[2]));
  use_device_0();
  if (g_failures) return finish();

  // Imported, then the exporter exits: the memory is still there.
  int socket = -1, fd = -1;
  size_t size = 0;
  pid_t pid = start_exporter(argv[0], &socket, &fd, &size);
  if (over_network()) {
    // Tampered stand-ins first: its bytes unsealed, then its last byte
    // (the secret's) changed.
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < 4096);
    std::vector<unsigned char> bytes(static_cast<size_t>(st.st_size));
    CHECK(pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    CUmemGenericAllocationHandle bad = 0;
    int unsealed = memfd_with(bytes, false);
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, import_fd(&bad, unsealed));
    close(unsealed);
    bytes.back() ^= 0x80;
    int altered = memfd_with(bytes, true);
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, import_fd(&bad, altered));
    close(altered);
  }
  CUmemGenericAllocationHandle h = 0;
  CU_OK(import_fd(&h, fd));
  close(fd);
  CUdeviceptr base = map_whole(h, size);
  end_exporter(pid, socket);
  std::vector<unsigned char> back(size);
  CU_OK(cuMemcpyDtoH(back.data(), base, size));
  bool same = true;
  for (size_t i = 0; i < size; ++i) same &= back[i] == pattern(i);
  CHECK(same);
  CU_OK(cuMemsetD8(base, 0x42, 64));
  CU_OK(cuMemcpyDtoH(back.data(), base, 64));
  CHECK(back[0] == 0x42 && back[63] == 0x42);
  unmap_whole(base, size);
  CU_OK(cuMemRelease(h));

  // The exporter exits first.
  pid = start_exporter(argv[0], &socket, &fd, &size);
  end_exporter(pid, socket);
  CUresult late = import_fd(&h, fd);
  if (over_network() && late != CUDA_SUCCESS) {
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, late);
  } else {
    CU_OK(late);
    base = map_whole(h, size);
    CU_OK(cuMemcpyDtoH(back.data(), base, 16));
    CHECK(back[0] == pattern(0) && back[15] == pattern(15));
    unmap_whole(base, size);
    CU_OK(cuMemRelease(h));
  }
  close(fd);
  // The session goes on.
  CUdeviceptr p = 0;
  CU_OK(cuMemAlloc(&p, 4096));
  CU_OK(cuMemFree(p));
  return finish();
}
