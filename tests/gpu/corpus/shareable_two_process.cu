// Shareable handles between two processes (as NVIDIA's memMapIPCDrv and
// streamOrderedAllocationIPC samples): the parent exports a cuMemCreate
// allocation and a memory pool as POSIX file descriptors, and a pool
// allocation as export data, and passes them over a socketpair to a copy of
// itself. The child imports all three, checks the parent's data and
// transforms it with kernels; the parent then sees the child's results.
// Through rgpu over shm the descriptors are the server's; over tcp and ucx
// they are rgpu's stand-ins, passed and imported the same way.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver_corpus.h"

__global__ void twice_plus_one(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * 2 + 1;
}

__global__ void negate(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = -d[i];
}

static const int kN = 1 << 20;  // ints in each shared buffer

// What travels with the descriptors.
struct Message {
  size_t vmm_size;
  cudaMemPoolPtrExportData pool_ptr;
};

static void send_fds(int socket, const int fds[2], const Message& m) {
  iovec iov{const_cast<Message*>(&m), sizeof m};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  std::memcpy(CMSG_DATA(c), fds, 2 * sizeof(int));
  EXPECT(sendmsg(socket, &msg, 0) == static_cast<ssize_t>(sizeof m), "sendmsg failed");
}

static bool receive_fds(int socket, int fds[2], Message* m) {
  iovec iov{m, sizeof *m};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(socket, &msg, MSG_WAITALL) != static_cast<ssize_t>(sizeof *m)) return false;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int))) return false;
  std::memcpy(fds, CMSG_DATA(c), 2 * sizeof(int));
  return true;
}

static CUmemAllocationProp vmm_prop() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Reserves, maps and opens `size` bytes of `h` for device 0.
static CUdeviceptr map_whole(CUmemGenericAllocationHandle h, size_t size) {
  CUdeviceptr base;
  CU(cuMemAddressReserve(&base, size, 0, 0, 0));
  CU(cuMemMap(base, size, 0, h, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU(cuMemSetAccess(base, size, &access, 1));
  return base;
}

static int count_bad(const std::vector<int>& h, int (*expected)(int)) {
  int bad = 0;
  for (int i = 0; i < kN; ++i) bad += h[i] != expected(i);
  return bad;
}

static int vmm_value(int i) { return i % 1013; }
static int pool_value(int i) { return (i * 7) % 4099; }

static int child(int socket) {
  int fds[2];
  Message m;
  if (!receive_fds(socket, fds, &m)) return 2;
  CU(cuInit(0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU(cuCtxSetCurrent(ctx));
  std::vector<int> h(kN);

  // The cuMemCreate allocation.
  CUmemGenericAllocationHandle vmm;
  CU(cuMemImportFromShareableHandle(&vmm, reinterpret_cast<void*>(static_cast<intptr_t>(fds[0])),
                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fds[0]);
  CUdeviceptr base = map_whole(vmm, m.vmm_size);
  int* v = reinterpret_cast<int*>(base);
  CK(cudaMemcpy(h.data(), v, kN * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = count_bad(h, vmm_value);
  twice_plus_one<<<kN / 256, 256>>>(v, kN);
  CK(cudaDeviceSynchronize());
  CU(cuMemUnmap(base, m.vmm_size));
  CU(cuMemAddressFree(base, m.vmm_size));
  CU(cuMemRelease(vmm));

  // The pool and its allocation.
  cudaMemPool_t pool;
  CK(cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fds[1])),
                                          cudaMemHandleTypePosixFileDescriptor, 0));
  close(fds[1]);
  cudaMemLocation here{cudaMemLocationTypeDevice, 0};
  cudaMemAccessFlags flags;
  CK(cudaMemPoolGetAccess(&flags, pool, &here));
  if (flags != cudaMemAccessFlagsProtReadWrite) {
    cudaMemAccessDesc desc{here, cudaMemAccessFlagsProtReadWrite};
    CK(cudaMemPoolSetAccess(pool, &desc, 1));
  }
  int* p;
  CK(cudaMemPoolImportPointer(reinterpret_cast<void**>(&p), pool, &m.pool_ptr));
  CK(cudaMemcpy(h.data(), p, kN * sizeof(int), cudaMemcpyDeviceToHost));
  bad += count_bad(h, pool_value);
  negate<<<kN / 256, 256>>>(p, kN);
  CK(cudaDeviceSynchronize());
  CK(cudaFree(p));  // an importer frees its import before the exporter frees the memory
  CK(cudaMemPoolDestroy(pool));

  char done = bad == 0 ? 1 : 3;
  if (write(socket, &done, 1) != 1) return 4;
  return bad == 0 ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(std::atoi(argv[2]));
  CU(cuInit(0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU(cuCtxSetCurrent(ctx));
  int posix = 0, pool_types = 0;
  CU(cuDeviceGetAttribute(&posix, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  CK(cudaDeviceGetAttribute(&pool_types, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
  printf("POSIX descriptor handles: memory %s, pools %s\n", posix ? "yes" : "no",
         pool_types & cudaMemHandleTypePosixFileDescriptor ? "yes" : "no");
  std::vector<int> h(kN);

  // A cuMemCreate allocation that may be exported as a descriptor.
  CUmemAllocationProp prop = vmm_prop();
  size_t g;
  CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  size_t vmm_size = (kN * sizeof(int) + g - 1) / g * g;
  CUmemGenericAllocationHandle vmm;
  CU(cuMemCreate(&vmm, vmm_size, &prop, 0));
  CUdeviceptr base = map_whole(vmm, vmm_size);
  int* v = reinterpret_cast<int*>(base);
  for (int i = 0; i < kN; ++i) h[i] = vmm_value(i);
  CK(cudaMemcpy(v, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));

  // A pool shareable as a descriptor, and an allocation from it.
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location = {cudaMemLocationTypeDevice, 0};
  cudaMemPool_t pool;
  CK(cudaMemPoolCreate(&pool, &props));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  int* p;
  CK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p), kN * sizeof(int), pool, stream));
  for (int i = 0; i < kN; ++i) h[i] = pool_value(i);
  CK(cudaMemcpyAsync(p, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice, stream));
  CK(cudaStreamSynchronize(stream));  // the allocation is complete before another process imports it

  int fds[2];
  CU(cuMemExportToShareableHandle(&fds[0], vmm, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CK(cudaMemPoolExportToShareableHandle(&fds[1], pool, cudaMemHandleTypePosixFileDescriptor, 0));
  Message m{vmm_size, {}};
  CK(cudaMemPoolExportPointer(&m.pool_ptr, p));

  int pair[2];
  EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair failed");
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(pair[0]);
    std::string fd = std::to_string(pair[1]);
    execl("/proc/self/exe", argv[0], "child", fd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pair[1]);
  send_fds(pair[0], fds, m);
  close(fds[0]);  // the child has its own copies
  close(fds[1]);
  char done = 0;
  EXPECT(read(pair[0], &done, 1) == 1 && done == 1, "child reported %d", done);
  int status = -1;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  printf("child exit code: %d\n", code);
  EXPECT(code == 0, "child failed");
  close(pair[0]);

  CK(cudaMemcpy(h.data(), v, kN * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = count_bad(h, [](int i) { return vmm_value(i) * 2 + 1; });
  EXPECT(bad == 0, "%d wrong", bad);
  printf("cuMemCreate allocation after the child's kernel: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(h.data(), kN * sizeof(int)));
  CK(cudaMemcpy(h.data(), p, kN * sizeof(int), cudaMemcpyDeviceToHost));
  bad = count_bad(h, [](int i) { return -pool_value(i); });
  EXPECT(bad == 0, "%d wrong", bad);
  printf("pool allocation after the child's kernel: mismatches=%d checksum=%016llx\n", bad,
         (unsigned long long)fnv1a(h.data(), kN * sizeof(int)));

  CK(cudaFreeAsync(p, stream));
  CK(cudaStreamSynchronize(stream));
  CK(cudaStreamDestroy(stream));
  CK(cudaMemPoolDestroy(pool));
  CU(cuMemUnmap(base, vmm_size));
  CU(cuMemAddressFree(base, vmm_size));
  CU(cuMemRelease(vmm));
  return finish();
}
