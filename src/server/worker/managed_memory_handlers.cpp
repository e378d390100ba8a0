// Managed memory (shm): a client memfd mapped at the client's own address
// and pinned, where the GPU maps it at that same address too, so one
// pointer is valid in the application and in kernels. It joins the
// session's shared regions (dropped with the session) and mapped memory
// (copies and memsets naming it validate).
#include <sys/mman.h>
#include <unistd.h>

#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::server {
namespace {

int32_t map_managed(SessionContext& s, Request& req, uint64_t base, uint64_t size) {
  int fd = req.connection().take_fd();
  if (fd < 0) return cudaErrorInvalidValue;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (size == 0 || base % page != 0) {
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  if (std::string why = transport::unsafe_to_map(fd, size); !why.empty()) {
    s.warnings.warn("unsafe shared memory", "managed memory refused: %s", why.c_str());
    close(fd);
    return cudaErrorInvalidValue;
  }
  // At exactly the application's address, or not at all (taken in this
  // worker: the client tries another).
  if (!transport::map_shared_memory(fd, size, reinterpret_cast<void*>(base), true)) return cudaErrorMemoryAllocation;
  void* local = reinterpret_cast<void*>(base);
  if (int32_t e = s.backend().host_register(local, size)) {
    munmap(local, size);
    return e;
  }
  DevPtr device = 0;
  int32_t e = s.backend().host_get_device_pointer(&device, local);
  if (e == cudaSuccess && device != base) {
    s.warnings.warn("managed memory elsewhere",
                    "managed memory: the GPU maps host memory at other addresses; not supported");
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

// Managed memory counts against the session's memory and its job's amount
// like device memory (over tcp it is device memory), and, pinned here,
// against its page-locked host memory. Past a limit the descriptor is left
// for the session loop to close.
int32_t managed_map(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  return s.quota.allocate(req.header().device, size, SessionQuota::Kind::memory, &base, [&] {
    if (!s.host_memory.hold(size, "managed memory")) return int32_t{cudaErrorMemoryAllocation};
    int32_t e = map_managed(s, req, base, size);
    if (e) s.host_memory.give_back(size);
    return e;
  });
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
  s.quota.freed(SessionQuota::Kind::memory, base);
  int32_t e = s.backend().host_unregister(region->second.local);
  munmap(region->second.local, region->second.size);
  s.host_memory.give_back(region->second.size);
  return e;
}

}  // namespace

void register_managed_memory_handlers(Dispatcher& d) {
  d.add(proto::kOpManagedMap, managed_map);
  d.add(proto::kOpManagedUnmap, managed_unmap);
}

}  // namespace rgpu::server
