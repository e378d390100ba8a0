// Managed memory (shm): a client memfd mapped at the client's own address
// and pinned, where the GPU maps it at that same address too, so one
// pointer is valid in the application and in kernels. It joins the
// session's shared regions (dropped with the session) and mapped memory
// (copies and memsets naming it validate).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

// Maps fd at exactly base, or fails (the address is taken in this worker).
bool map_at(int fd, uint64_t base, size_t size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < size) return false;
  void* want = reinterpret_cast<void*>(base);
  void* p = mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
  if (p == MAP_FAILED) return false;
  if (p != want) {
    munmap(p, size);
    return false;
  }
  return true;
}

int32_t managed_map(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  int fd = req.connection().take_fd();
  if (fd < 0) return cudaErrorInvalidValue;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bool mapped = size > 0 && base % page == 0 && map_at(fd, base, size);
  close(fd);
  if (!mapped) return cudaErrorMemoryAllocation;
  void* local = reinterpret_cast<void*>(base);
  if (int32_t e = s.backend().host_register(local, size)) {
    munmap(local, size);
    return e;
  }
  DevPtr device = 0;
  int32_t e = s.backend().host_get_device_pointer(&device, local);
  if (e == cudaSuccess && device != base) {
    RGPU_LOG(warn, "managed memory: the GPU maps host memory at other addresses; not supported");
    e = cudaErrorNotSupported;
  }
  if (e == cudaSuccess && !s.add_shared(base, SharedRegion{local, size})) e = cudaErrorInvalidValue;
  if (e) {
    s.backend().host_unregister(local);
    munmap(local, size);
    return e;
  }
  s.mapped.add(base, size);
  return cudaSuccess;
}

int32_t managed_unmap(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  req.args.expect_end();
  auto region = s.shared_region(base);
  // Only a region mapped at the client's address is managed memory.
  if (!region || region->first != base || region->second.local != reinterpret_cast<void*>(base))
    return cudaErrorInvalidValue;
  s.take_shared(base);
  s.mapped.remove(base);
  int32_t e = s.backend().host_unregister(region->second.local);
  munmap(region->second.local, region->second.size);
  return e;
}

}  // namespace

void register_managed_memory_handlers(Dispatcher& d) {
  d.add(proto::kOpManagedMap, managed_map);
  d.add(proto::kOpManagedUnmap, managed_unmap);
}

}  // namespace rgpu::server
