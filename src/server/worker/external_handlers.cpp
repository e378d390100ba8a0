// External memory and semaphores. Importing takes the file descriptor the
// client sent with the frame (shm only); every later call names objects the
// session imported, and buffers lie inside their memory. A mapped buffer is
// one of the session's allocations (copies and kernels may use it; cudaFree
// releases it); mapped mipmapped arrays are in array_handlers.cpp.
#include <cuda.h>
#include <unistd.h>

#include "protocol/external_wire.hpp"
#include "protocol/ops.hpp"
#include "server/worker/dispatcher.hpp"
#include "server/worker/session_context.hpp"

namespace rgpu::server {
namespace {

bool fd_memory_type(int32_t type) {
  return type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD || type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
}

bool fd_semaphore_type(int32_t type) {
  return type == CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD ||
         type == CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
}

int32_t import_memory(SessionContext& s, Request& req, proto::Writer& out) {
  auto type = req.args.get<int32_t>();
  auto size = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  int fd = req.connection().take_fd();
  if (fd < 0) return cudaErrorInvalidValue;  // none came with the frame (not over shm)
  if (!fd_memory_type(type) || size == 0 || (flags & ~CUDA_EXTERNAL_MEMORY_DEDICATED)) {
    close(fd);
    return cudaErrorInvalidValue;
  }
  if (!s.external_memories.room_for_one_more()) {
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  uint64_t h = 0;
  if (int32_t e = s.backend().external().import_memory(fd, type, size, flags, &h)) return e;
  s.external_memories.add(h, size);
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t destroy_memory(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.external_memories.remove(h)) return cudaErrorInvalidResourceHandle;
  return s.backend().external().destroy_memory(h);
}

int32_t map_buffer(SessionContext& s, Request& req, proto::Writer& out) {
  auto h = req.args.get<uint64_t>();
  auto offset = req.args.get<uint64_t>();
  auto size = req.args.get<uint64_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  auto total = s.external_memories.size_of(h);
  if (!total) return cudaErrorInvalidResourceHandle;
  if (size == 0 || flags != 0 || offset > *total || size > *total - offset) return cudaErrorInvalidValue;
  uint64_t p = 0;
  if (int32_t e = s.backend().external().map_buffer(h, offset, size, flags, &p)) return e;
  s.allocations.add(p, size);
  out.put<uint64_t>(p);
  return cudaSuccess;
}

int32_t import_semaphore(SessionContext& s, Request& req, proto::Writer& out) {
  auto type = req.args.get<int32_t>();
  auto flags = req.args.get<uint32_t>();
  req.args.expect_end();
  int fd = req.connection().take_fd();
  if (fd < 0) return cudaErrorInvalidValue;  // none came with the frame (not over shm)
  if (!fd_semaphore_type(type) || flags != 0) {
    close(fd);
    return cudaErrorInvalidValue;
  }
  if (!s.external_semaphores.room_for_one_more()) {
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  uint64_t h = 0;
  if (int32_t e = s.backend().external().import_semaphore(fd, type, flags, &h)) return e;
  s.external_semaphores.add(h);
  out.put<uint64_t>(h);
  return cudaSuccess;
}

int32_t destroy_semaphore(SessionContext& s, Request& req, proto::Writer&) {
  auto h = req.args.get<uint64_t>();
  req.args.expect_end();
  if (!s.external_semaphores.remove(h)) return cudaErrorInvalidResourceHandle;
  return s.backend().external().destroy_semaphore(h);
}

// Stream, then the operations; each names a semaphore of the session. Flags
// are for NvSciSync objects only, which cannot be imported here.
int32_t read_operations(SessionContext& s, Request& req, uint64_t* stream,
                        std::vector<proto::ExternalSemaphoreOp>* ops) {
  *stream = req.args.get<uint64_t>();
  *ops = proto::get_semaphore_ops(req.args);
  req.args.expect_end();
  if (!s.valid_stream(*stream)) return cudaErrorInvalidResourceHandle;
  for (const auto& op : *ops) {
    if (!s.external_semaphores.contains(op.semaphore)) return cudaErrorInvalidResourceHandle;
    if (op.flags != 0) return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

int32_t signal(SessionContext& s, Request& req, proto::Writer&) {
  uint64_t stream;
  std::vector<proto::ExternalSemaphoreOp> ops;
  if (int32_t e = read_operations(s, req, &stream, &ops)) return e;
  return s.backend().external().signal(ops, stream);
}

int32_t wait(SessionContext& s, Request& req, proto::Writer&) {
  uint64_t stream;
  std::vector<proto::ExternalSemaphoreOp> ops;
  if (int32_t e = read_operations(s, req, &stream, &ops)) return e;
  return s.backend().external().wait(ops, stream);
}

}  // namespace

void register_external_handlers(Dispatcher& d) {
  d.add(proto::kOpExternalMemoryImport, import_memory);
  d.add(proto::kOpExternalMemoryDestroy, destroy_memory);
  d.add(proto::kOpExternalMemoryMapBuffer, map_buffer);
  d.add(proto::kOpExternalSemaphoreImport, import_semaphore);
  d.add(proto::kOpExternalSemaphoreDestroy, destroy_semaphore);
  d.add(proto::kOpExternalSemaphoresSignal, signal);
  d.add(proto::kOpExternalSemaphoresWait, wait);
}

}  // namespace rgpu::server
