// Green contexts (the driver's cuGreenCtx* and cuDev*Resource* calls): SM
// resources of a device, split into groups, turned into descriptors and
// provisioned as green contexts, each with streams of its own. Results are
// CUresult values (numbered as the runtime's errors they mean). Handles are
// the backend's own; the worker checks every one before it gets here.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <span>

namespace rgpu::server {

class GreenContextApi {
 public:
  using Handle = uint64_t;
  virtual ~GreenContextApi() = default;

  // cuDeviceGetDevResource of `device` (a server ordinal).
  virtual int32_t device_resource(int device, CUdevResourceType type, CUdevResource* out) = 0;
  // cuGreenCtxGetDevResource.
  virtual int32_t green_resource(Handle green, CUdevResourceType type, CUdevResource* out) = 0;
  // cuDevSmResourceSplitByCount; result empty: count only (*groups out).
  // *groups holds result.size() on entry when result is not empty.
  virtual int32_t split_by_count(std::span<CUdevResource> result, unsigned* groups, const CUdevResource& input,
                                 CUdevResource* remaining, unsigned flags, unsigned min_count) = 0;
  virtual int32_t generate_desc(Handle* desc, std::span<CUdevResource> resources) = 0;
  virtual int32_t create(Handle* green, Handle desc, int device, unsigned flags) = 0;
  virtual int32_t destroy(Handle green) = 0;
  virtual int32_t id(Handle green, unsigned long long* id) = 0;
  virtual int32_t record_event(Handle green, Handle event) = 0;
  virtual int32_t wait_event(Handle green, Handle event) = 0;
  virtual int32_t stream_create(Handle* stream, Handle green, unsigned flags, int priority) = 0;
  // The green context a stream was created in (0: none).
  virtual int32_t stream_green(Handle stream, Handle* green) = 0;
  // Makes the green context current to the calling thread, so that the
  // calls that follow on it run in the green context.
  virtual int32_t make_current(Handle green) = 0;
};

}  // namespace rgpu::server
