// Green contexts on the GPU: the driver's own calls.
#pragma once
#include "server/backend/green_context_api.hpp"

namespace rgpu::server {

class CudaGreenContexts final : public GreenContextApi {
 public:
  int32_t device_resource(int device, CUdevResourceType type, CUdevResource* out) override;
  int32_t green_resource(Handle green, CUdevResourceType type, CUdevResource* out) override;
  int32_t split_by_count(std::span<CUdevResource> result, unsigned* groups, const CUdevResource& input,
                         CUdevResource* remaining, unsigned flags, unsigned min_count) override;
  int32_t generate_desc(Handle* desc, std::span<CUdevResource> resources) override;
  int32_t create(Handle* green, Handle desc, int device, unsigned flags) override;
  int32_t destroy(Handle green) override;
  int32_t id(Handle green, unsigned long long* id) override;
  int32_t record_event(Handle green, Handle event) override;
  int32_t wait_event(Handle green, Handle event) override;
  int32_t stream_create(Handle* stream, Handle green, unsigned flags, int priority) override;
  int32_t stream_green(Handle stream, Handle* green) override;
  int32_t make_current(Handle green) override;
};

}  // namespace rgpu::server
