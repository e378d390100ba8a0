// The real GPU's external memory and semaphores: the CUDA runtime's own
// calls, handles passed through as they are.
#pragma once
#include "server/backend/external_api.hpp"

namespace rgpu::server {

class CudaExternal final : public ExternalApi {
 public:
  int32_t import_memory(int fd, int32_t type, uint64_t size, uint32_t flags, uint64_t* memory) override;
  int32_t destroy_memory(uint64_t memory) override;
  int32_t map_buffer(uint64_t memory, uint64_t offset, uint64_t size, uint32_t flags, uint64_t* ptr) override;
  int32_t map_mipmapped_array(uint64_t memory, uint64_t offset, const ArraySpec& spec, unsigned levels,
                              uint64_t* mipmap) override;
  int32_t import_semaphore(int fd, int32_t type, uint32_t flags, uint64_t* semaphore) override;
  int32_t destroy_semaphore(uint64_t semaphore) override;
  int32_t signal(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) override;
  int32_t wait(std::span<const proto::ExternalSemaphoreOp> ops, uint64_t stream) override;
};

}  // namespace rgpu::server
