// shm: client page-locked memory mapped into the worker and pinned here, so
// copies from and to it are the GPU's DMA with nothing through the socket.
// Pinned, it counts against the session's max-session-host-memory.
// Mapped at the application's own address where that is free here, the GPU
// reaches it at that address too, as under unified addressing locally:
// kernels may be handed the application's pointer (XLA does).
#include <sys/mman.h>
#include <unistd.h>

#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"
#include "transport/shm/shared_memory.hpp"

namespace rgpu::server {
namespace {

// Maps the client's memory (fd) and pins it.
int32_t register_shared(SessionContext& s, int fd, uint64_t base, uint64_t size) {
  std::string why;
  void* local = transport::map_shared_memory(fd, size, reinterpret_cast<void*>(base), false, &why);
  if (!local) {
    s.warnings.warn("unsafe shared memory", "shared page-locked memory refused: %s", why.c_str());
    return cudaErrorInvalidValue;
  }
  if (int32_t e = s.backend().host_register(local, size)) {
    munmap(local, size);
    return e;
  }
  if (!s.add_shared(base, SharedRegion{local, size})) {
    s.backend().host_unregister(local);
    munmap(local, size);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

int32_t host_register_shared(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  req.args.expect_end();
  int fd = req.connection().take_fd();
  if (fd < 0) return cudaErrorInvalidValue;  // not sent over shm, or no descriptor
  if (size == 0) {
    close(fd);
    return cudaErrorInvalidValue;
  }
  if (!s.host_memory.hold(size, "shared page-locked memory")) {
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  int32_t e = register_shared(s, fd, base, size);
  if (e) s.host_memory.give_back(size);
  return e;
}

int32_t host_unregister_shared(SessionContext& s, Request& req, proto::Writer&) {
  auto base = req.args.get<uint64_t>();
  req.args.expect_end();
  auto region = s.take_shared(base);
  if (!region) return cudaErrorHostMemoryNotRegistered;
  DevPtr mapped = 0;
  if (s.backend().host_get_device_pointer(&mapped, region->local) == cudaSuccess) s.mapped.remove(mapped);
  int32_t e = s.backend().host_unregister(region->local);
  munmap(region->local, region->size);
  s.host_memory.give_back(region->size);
  return e;
}

int32_t memcpy_shared(SessionContext& s, Request& req, proto::Writer&) {
  auto device = req.args.get<uint64_t>();
  auto host = req.args.get<uint64_t>();
  auto n = req.args.get<uint64_t>();
  bool to_device = req.args.get<uint8_t>();
  auto stream = req.args.get<uint64_t>();
  bool sync = req.args.get<uint8_t>();
  bool application = req.args.get<uint8_t>();  // the application's page-locked memory, not a staging slot
  req.args.expect_end();
  void* local = s.shared_host(host, n);
  if (!local || !s.owns(device, n)) return cudaErrorInvalidValue;
  if (!s.valid_stream(stream)) return cudaErrorInvalidResourceHandle;
  void* dev = reinterpret_cast<void*>(device);
  // Only memory that outlives the call may be captured into a graph.
  auto copy = application ? &Backend::memcpy_shared_async : &Backend::memcpy_async;
  Backend& b = s.backend();
  int32_t e = to_device ? (b.*copy)(dev, local, n, cudaMemcpyHostToDevice, stream)
                        : (b.*copy)(local, dev, n, cudaMemcpyDeviceToHost, stream);
  if (e) return e;
  return sync ? s.backend().stream_synchronize(stream) : cudaSuccess;
}

}  // namespace

void register_shared_memory_handlers(Dispatcher& d) {
  d.add(proto::kOpHostRegisterShared, host_register_shared);
  d.add(proto::kOpHostUnregisterShared, host_unregister_shared);
  d.add(proto::kOpMemcpyShared, memcpy_shared);
}

}  // namespace rgpu::server
