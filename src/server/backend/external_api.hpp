// What a backend does for external memory and external semaphores. The
// worker has checked every handle and range first: memory and semaphore
// handles are values this interface returned to the session, a buffer or
// mipmapped array lies inside its memory, and each file descriptor is the
// worker's own copy of one the application sent (the backend owns it from
// the call on: it closes it, or the driver keeps it on a successful import).
// Handle types use the driver's numbering (CUexternalMemoryHandleType,
// CUexternalSemaphoreHandleType), which the runtime's shares.
#pragma once
#include <cstdint>
#include <span>

#include "protocol/external_wire.hpp"
#include "server/backend/array_api.hpp"

namespace rgpu::server {

class ExternalApi {
 public:
  virtual ~ExternalApi() = default;
  virtual int32_t import_memory(int fd, int32_t type, uint64_t size, uint32_t flags, uint64_t* memory) = 0;
  virtual int32_t destroy_memory(uint64_t memory) = 0;
  // A device address of [offset, +size) of the memory; the backend's free()
  // releases it.
  virtual int32_t map_buffer(uint64_t memory, uint64_t offset, uint64_t size, uint32_t flags, uint64_t* ptr) = 0;
  // A mipmapped array laid over the memory from offset; arrays() destroys it.
  virtual int32_t map_mipmapped_array(uint64_t memory, uint64_t offset, const ArraySpec& spec, unsigned levels,
                                      uint64_t* mipmap) = 0;
  virtual int32_t import_semaphore(int fd, int32_t type, uint32_t flags, uint64_t* semaphore) = 0;
  virtual int32_t destroy_semaphore(uint64_t semaphore) = 0;
  // In stream order; semaphores already this backend's handles.
  virtual int32_t signal(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) = 0;
  virtual int32_t wait(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) = 0;
};

}  // namespace rgpu::server
